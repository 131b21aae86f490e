import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// `/verify`: Verify now runs in the background like a sync and the page lists what differs, each
/// row linked to its history.
@Suite(.timeLimit(.minutes(10))) struct VerifyPageTests {
    @Test func verifyNowComparesEverySyncedTableAndListsTheRowsThatDiffer() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            #expect(try await harness.submit("/sync", ["back": "/"]).status == 303)
            await harness.dashboard.waitUntilIdle()

            let before = try await harness.client.send(.get, "/verify")
            #expect(before.text.contains("No verify has run since the dashboard started."))
            #expect(before.text.contains(#"<button type="submit" class="primary">Verify now</button>"#))
            #expect(try await harness.submit("/verify", ["back": "/verify"]).status == 303)
            await harness.dashboard.waitUntilIdle()
            let matching = try await harness.client.send(.get, "/verify")
            #expect(matching.text.contains("todoitem: 1 local rows, 1 on the service (deleted included); they match."))
            #expect(matching.text.contains("this copy matches the service"), "the flash message")

            // Changed on the service after the last pull: a difference with a reason.
            _ = try await TableClient(base: harness.url).patch("a", ["text": "changed there"])
            #expect(try await harness.submit("/verify", ["back": "/verify"]).status == 303)
            await harness.dashboard.waitUntilIdle()
            let differing = try await harness.client.send(.get, "/verify")
            #expect(differing.text.contains("1 row differs, with a reason."))
            #expect(differing.text.contains(#"<a href="/items/a/history">a</a>"#))
            #expect(differing.text.contains("changed on the service after the last pull"))

            let api = try await harness.client.send(.get, "/api/verify")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            struct Answer: Decodable {
                var running: Bool
                var reports: [VerifyReport]
            }
            let answer = try decoder.decode(Answer.self, from: api.body)
            #expect(!answer.running && answer.reports.map(\.table) == ["todoitem"])
            #expect(answer.reports[0].differences.map(\.reason) == [.notPulledYet])
        }
    }

    @Test func aVerifyThatCannotReachTheServiceSaysWhyOnThePage() async throws {
        try await withTestDashboard { harness in
            try await harness.dashboard.context.setOffline(true)
            #expect(try await harness.submit("/verify", ["back": "/verify"]).status == 303)
            await harness.dashboard.waitUntilIdle()
            let page = try await harness.client.send(.get, "/verify")
            #expect(page.text.contains("The last verify stopped before the end: "))
            #expect(page.text.contains("Offline mode is on"), "\(page.text)")
        }
    }
}
