import FaultProxy
import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// The queue page's stuck changes: age, attempts, last answer, next attempt, stuck first, and Retry
/// now, Hold, Release and Discard per row, in bulk and over the JSON API.
@Suite(.timeLimit(.minutes(10))) struct StuckOperationsPageTests {
    /// A dashboard whose service refuses every insert of a todo whose text starts with "refuse".
    func refusingDashboard() async throws -> (TestDashboard, FaultProxy) {
        let harness = try await TestDashboard()
        let context = harness.dashboard.context
        let gateway = try await FaultProxy(upstream: try #require(context.remoteURL))
        gateway.intercept { request, _ in
            guard request.method == "POST", String(decoding: request.body, as: UTF8.self).contains("refuse") else {
                return nil
            }
            return .answer(
                ProxiedResponse(
                    status: 400, headers: ["Content-Type": "application/json"],
                    body: Array(#"{"error":"<b>no</b> refusals today"}"#.utf8)))
        }
        try await context.setRemote(url: gateway.endpoint, applicationKey: nil)
        return (harness, gateway)
    }

    @Test func aRefusedChangeComesFirstWithItsAnswerAndNextAttempt() async throws {
        let (harness, gateway) = try await refusingDashboard()
        let context = harness.dashboard.context
        try await context.table("todoitem").insert(["id": "ok", "text": "fine"])
        try await context.table("todoitem").insert(["id": "no", "text": "refuse me"])
        try await context.operations.perform(.hold, on: 1)
        _ = try await harness.submit("/push", [:])
        await harness.dashboard.waitUntilIdle()

        let page = try await harness.client.send(.get, "/operations")
        #expect(page.status == 200)
        let text = page.text
        // The refused #2 comes before the held #1.
        let refused = try #require(text.range(of: #"<tr id="op-2" class="stuck">"#))
        let held = try #require(text.range(of: #"<tr id="op-1">"#))
        #expect(refused.lowerBound < held.lowerBound)
        #expect(text.contains("stuck: refused"))
        #expect(text.contains("&lt;b&gt;no&lt;/b&gt; refusals today") && !text.contains("<b>no</b>"))
        #expect(text.contains("after Retry now or an edit"))
        #expect(text.contains("held: not until you release it"))
        #expect(text.contains(#"data-field="stuck">1 stuck"#) && text.contains(#"data-field="held">1 held"#))
        #expect(text.contains(#"action="/operations/1/release""#) && !text.contains(#"action="/operations/1/hold""#))
        #expect(text.contains(#"action="/operations/2/retry""#) && text.contains(#"action="/operations/2/hold""#))
        #expect(text.contains(#"name="id" value="2" form="bulk""#))
        await gateway.stop()
        await harness.stop()
    }

    @Test func anOldPendingChangeIsStuckAndSaysWhenItIsSentNext() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            let entry = try #require(try context.operations.page(.first).entries.first)
            let fresh = OperationsController.row(entry)
            #expect(fresh.stuck == nil && fresh.age == "just now" && fresh.nextAttempt == "on the next push")
            let later = OperationsController.row(entry, now: Date().addingTimeInterval(3 * 3600 + 60))
            #expect(later.stuck == "waiting over 1 h" && later.age == "3 h" && later.canRetry)
            let due = Date().addingTimeInterval(90)
            #expect(OperationsController.row(entry, nextPushAt: due).nextAttemptAt == Display.date(due))
        }
    }

    @Test func holdEditReleaseFromThePageKeepsTheChangeHeldUntilReleased() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])

            let hold = try await harness.submit("/operations/1/hold", [:])
            #expect(hold.status == 303)
            #expect(try context.operations.operation(1)?.isHeld == true)
            try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
            #expect(try context.operations.operation(1)?.isHeld == true)
            _ = try await harness.submit("/push", [:])
            await harness.dashboard.waitUntilIdle()
            #expect(try context.operations.all().count == 1)
            let list = try await harness.client.send(.get, "/")
            #expect(list.text.contains("held insert"))

            #expect(try await harness.submit("/operations/1/retry", [:]).status == 409)
            #expect(try await harness.submit("/operations/1/release", [:]).status == 303)
            _ = try await harness.submit("/push", [:])
            await harness.dashboard.waitUntilIdle()
            #expect(try context.operations.all().isEmpty)
            #expect(try await harness.submit("/operations/1/hold", [:]).status == 404)
        }
    }

    @Test func theBulkFormHoldsReleasesAndAsksBeforeDiscarding() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            for id in ["a", "b", "c"] { try await context.table("todoitem").insert(["id": .string(id), "text": "x"]) }
            let token = try await harness.csrfToken()

            let held = try await harness.client.post(
                "/operations/bulk",
                pairs: [("_csrf", token), ("action", "hold"), ("reason", "later"), ("id", "1"), ("id", "2")])
            #expect(held.status == 303)
            #expect(try context.operations.all().map(\.isHeld) == [true, true, false])
            #expect(try context.operations.operation(2)?.hold?.reason == "later")

            let ask = try await harness.client.post(
                "/operations/bulk", pairs: [("_csrf", token), ("action", "discard"), ("id", "2"), ("id", "3")])
            #expect(ask.status == 200 && ask.text.contains("Discard these changes?"))
            #expect(try context.operations.all().count == 3)
            let discarded = try await harness.client.post(
                "/operations/bulk",
                pairs: [("_csrf", token), ("action", "discard"), ("confirm", "yes"), ("id", "2"), ("id", "3")])
            #expect(discarded.status == 303)
            #expect(try context.operations.all().map(\.id) == [1])

            let none = try await harness.client.post("/operations/bulk", pairs: [("_csrf", token), ("action", "hold")])
            #expect(none.status == 422 && none.text.contains("Select at least one change"))
            let bad = try await harness.client.post(
                "/operations/bulk", pairs: [("_csrf", token), ("action", "explode"), ("id", "1")])
            #expect(bad.status == 422)
            let forged = try await harness.client.post("/operations/bulk", pairs: [("action", "release"), ("id", "1")])
            #expect(forged.status == 403)
            #expect(try context.operations.operation(1)?.isHeld == true)
        }
    }

    @Test func theAPIHoldsReleasesRetriesAndAnswersRefusalsAsJSON() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            try await context.table("todoitem").insert(["id": "b", "text": "bread"])
            let headers: HTTPFields = [.init("X-CSRF-Token")!: try await harness.csrfToken()]

            let hold = try await harness.client.send(
                .post, "/api/operations/1/hold", json: Data(#"{"reason": "check first"}"#.utf8), headers: headers)
            #expect(hold.status == 200)
            let answer = try JSONSerialization.jsonObject(with: hold.body) as? [String: Any]
            #expect(answer?["outcome"] as? String == "done")
            #expect(
                ((answer?["operation"] as? [String: Any])?["hold"] as? [String: Any])?["reason"] as? String
                    == "check first"
            )

            let retry = try await harness.client.send(.post, "/api/operations/1/retry", headers: headers)
            #expect(retry.status == 409)
            let error = try JSONSerialization.jsonObject(with: retry.body) as? [String: Any]
            #expect((error?["error"] as? String)?.contains("Release it first") == true)
            #expect(try await harness.client.send(.post, "/api/operations/9/hold", headers: headers).status == 404)

            let bulk = try await harness.client.send(
                .post, "/api/operations/bulk", json: Data(#"{"action": "release", "ids": [1, 2, 9]}"#.utf8),
                headers: headers)
            #expect(bulk.status == 200)
            let results = try #require(
                (try JSONSerialization.jsonObject(with: bulk.body) as? [String: Any])?["results"] as? [[String: Any]])
            #expect(results.map { $0["outcome"] as? String } == ["done", "unchanged", "refused"])
            let wrong = try await harness.client.send(
                .post, "/api/operations/bulk", json: Data(#"{"action": "pause", "ids": [1]}"#.utf8), headers: headers)
            #expect(wrong.status == 422)

            let pushed = try await harness.client.send(.post, "/api/operations/2/retry", headers: headers)
            #expect(pushed.status == 200)
            await harness.dashboard.waitUntilIdle()
            #expect(try context.operations.all().isEmpty)
        }
    }

    @Test func heldOperationsAreCountedInTheMetrics() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            try await context.operations.perform(.hold, on: 1)
            let metrics = try await harness.client.send(.get, "/metrics")
            let samples = PrometheusSample.parse(metrics.text)
            #expect(samples.value("todosync_held_operations") == 1)
            #expect(samples.value("todosync_pending_operations", ["table": "todoitem"]) == 0)
        }
    }
}
