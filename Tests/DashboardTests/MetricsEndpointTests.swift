import Foundation
import HTTPTypes
import SyncClient
import TestSupport
import Testing

@testable import Dashboard

/// The dashboard's `GET /metrics`: its syncs, what they moved, and the queue, in the Prometheus
/// text format, with labels from fixed vocabularies only.
@Suite(.timeLimit(.minutes(10))) struct MetricsEndpointTests {
    @Test func metricsCountSyncsAndShowTheQueueWithoutIdsOrText() async throws {
        try await withTestDashboard { harness in
            let todos = harness.dashboard.context.table("todoitem")
            try await todos.insert(["id": "private-id-1", "text": "private text one"])
            try await todos.insert(["id": "private-id-2", "text": "private text two"])
            let sync = try await harness.submit("/sync", [:])
            #expect(sync.status == 303)
            await harness.dashboard.waitUntilIdle()
            try await todos.insert(["id": "private-id-3", "text": "private text three"])

            let answer = try await harness.client.send(.get, "/metrics")
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let samples = PrometheusSample.parse(answer.text)
            #expect(samples.value("todosync_syncs_total", ["kind": "sync", "outcome": "success"]) == 1)
            #expect(samples.value("todosync_pushed_operations_total", ["outcome": "pushed"]) == 2)
            #expect(samples.value("todosync_pulled_rows_total", ["table": "todoitem"]) != nil)
            #expect(samples.value("todosync_pending_operations", ["table": "todoitem"]) == 1)
            #expect(samples.value("todosync_conflicts", ["table": "todoitem"]) == 0)
            #expect(samples.value("todosync_held_operations") == 0)
            #expect(samples.value("todosync_sync_duration_seconds_count") == 1)
            let lastSuccess = try #require(samples.value("todosync_last_success_timestamp_seconds"))
            #expect(abs(lastSuccess - Date().timeIntervalSince1970) < 120)
            #expect(!samples.contains { $0.name == "todosync_next_attempt_timestamp_seconds" })
            #expect(!answer.text.contains("private"))
        }
    }

    /// Apart from a dashboard: its auto-sync writes the gauge whenever its schedule changes.
    @Test func theNextAttemptGaugeIsShownOnlyWhileAnAttemptIsPlanned() {
        let metrics = DashboardMetrics(isRecording: true)
        metrics.nextAttempt = Date(timeIntervalSince1970: 2_000_000_000)
        let later = PrometheusSample.parse(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(later.value("todosync_next_attempt_timestamp_seconds") == 2_000_000_000)
        metrics.nextAttempt = nil
        let unset = PrometheusSample.parse(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(!unset.contains { $0.name == "todosync_next_attempt_timestamp_seconds" })
    }

    @Test func queueGaugesReadZeroForEverySyncedTableWhenNothingIsQueued() async throws {
        try await withTestDashboard { harness in
            try await harness.dashboard.context.setSyncedTables(["todoitem", "orders"])
            let samples = PrometheusSample.parse(try await harness.client.send(.get, "/metrics").text)
            for table in ["todoitem", "orders"] {
                #expect(samples.value("todosync_pending_operations", ["table": table]) == 0, "\(table)")
                #expect(samples.value("todosync_conflicts", ["table": table]) == 0, "\(table)")
            }
        }
    }

    @Test func metricsAnswerOnlyTheAllowedHosts() async throws {
        try await withTestDashboard { harness in
            let port = harness.dashboard.server.port
            let refused = try await RawHTTP.send(
                port: port, "GET /metrics HTTP/1.1\r\nHost: attacker.example:\(port)\r\nConnection: close\r\n\r\n")
            #expect(refused.hasPrefix("HTTP/1.1 421"))
        }
    }

    @Test func aSyncThatFailsIsCountedAsAFailure() async throws {
        let unreachable = try #require(URL(string: "http://127.0.0.1:9"))
        try await withTestDashboard(remote: .url(unreachable, applicationKey: nil)) { harness in
            try await harness.dashboard.context.table("todoitem").insert(["id": "a", "text": "x"])
            _ = try await harness.submit("/push", [:])
            await harness.dashboard.waitUntilIdle()
            let samples = PrometheusSample.parse(try await harness.client.send(.get, "/metrics").text)
            #expect(samples.value("todosync_syncs_total", ["kind": "push", "outcome": "failure"]) == 1)
            #expect(samples.value("todosync_last_success_timestamp_seconds") == nil)
        }
    }
}
