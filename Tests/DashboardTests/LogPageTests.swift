import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// `/log` and `/api/log`: the flight recorder's exchanges, newest first, filtered, escaped.
@Suite(.timeLimit(.minutes(10))) struct LogPageTests {
    @Test func theLogShowsEachExchangeWithItsBodiesEscaped() async throws {
        try await withTestDashboard { harness in
            let hostile = "<script>alert(1)</script>"
            try await harness.dashboard.context.table("todoitem").insert(["id": "a", "text": .string(hostile)])
            _ = try await harness.dashboard.context.push()

            let page = try await harness.client.send(.get, "/log")
            #expect(page.status == 200)
            #expect(page.text.contains("POST</span> <code class=\"target\">/tables/todoitem</code>"))
            #expect(page.text.contains("push of operation 1 (todoitem a)"))
            #expect(page.text.contains(#"<a href="/items/a">open the item</a>"#))
            #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!page.text.contains(hostile))
        }
    }

    @Test func theAPIListsFilteredPagesAndRefusesABadFilter() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            for id in ["a", "b", "c"] { try await context.table("todoitem").insert(["id": .string(id), "text": "x"]) }
            _ = try await context.push()
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601

            let first = try await harness.client.send(.get, "/api/log?status=201&limit=2")
            #expect(first.status == 200)
            let page = try decoder.decode(ExchangePage.self, from: first.body)
            #expect(page.exchanges.count == 2 && page.exchanges.allSatisfy { $0.status == 201 })
            // Besides the three inserts: the question which protocol the embedded service speaks.
            #expect(try context.exchanges().exchanges.last?.purpose == .protocolProbe(table: "todoitem"))
            let next = try #require(page.next)
            let older = try await harness.client.send(.get, "/api/log?status=201&limit=2&before=\(next)")
            #expect(try decoder.decode(ExchangePage.self, from: older.body).exchanges.count == 1)
            let none = try await harness.client.send(.get, "/api/log?status=failed")
            #expect(try decoder.decode(ExchangePage.self, from: none.body).exchanges.isEmpty)

            let bad = try await harness.client.send(.get, "/api/log?status=abc", headers: [.accept: "application/json"])
            #expect(bad.status == 400)
            #expect(bad.text.contains("'status' takes a status"))
            let badPage = try await harness.client.send(.get, "/log?limit=0")
            #expect(badPage.status == 400 && badPage.text.contains("from 1 to 500"))
        }
    }
}
