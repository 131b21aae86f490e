import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// `/items/{id}/history`, `/data/{table}/{id}/history` and their `/api` twins: the sentence and the
/// events, escaped, linked from the editor, the queue, the conflict page and the journal.
@Suite(.timeLimit(.minutes(10))) struct HistoryPageTests {
    @Test func theHistoryPageExplainsTheRowAndEscapesItsValues() async throws {
        try await withTestDashboard { harness in
            let hostile = "<script>alert(1)</script>"
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a<b", "text": .string(hostile)])

            let editor = try await harness.client.send(.get, "/items/a%3Cb")
            #expect(editor.text.contains(#"<a href="/items/a%3Cb/history">"#))
            let queue = try await harness.client.send(.get, "/operations")
            #expect(queue.text.contains(#"<a class="muted" href="/items/a%3Cb/history">history</a>"#))

            _ = try await context.push()
            let page = try await harness.client.send(.get, "/items/a%3Cb/history")
            #expect(page.status == 200)
            #expect(page.text.contains("History of <span class=\"mono\">a&lt;b</span>"))
            #expect(page.text.contains("Your new row is on the service: it applied it at "))
            #expect(page.text.contains(">Local insert</span>") && page.text.contains(">Pushed</span>"))
            #expect(page.text.contains("text = &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;"))
            #expect(!page.text.contains(hostile))
        }
    }

    @Test func theAPIGivesTheSameHistoryAsJSONAndUnknownRowsAre404() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            try await context.table("todoitem").update(["id": "a", "text": "oat milk"])

            let answer = try await harness.client.send(.get, "/api/data/todoitem/a/history")
            #expect(answer.status == 200)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let history = try decoder.decode(ItemHistory.self, from: answer.body)
            #expect(history.events.map(\.kind) == [.localInsert, .localUpdate])
            #expect(history.explanation == (try context.table("todoitem").history(id: "a").explanation))
            #expect(history.operation?.id == 1)

            let missing = try await harness.client.send(.get, "/items/nothing/history")
            #expect(missing.status == 404 && missing.text.contains("no kept event names it"))
            let table = try await harness.client.send(.get, "/api/data/nosuch/a/history")
            #expect(table.status == 404)
        }
    }

    @Test func aConflictLinksToTheHistoryAndTheHistoryBackToTheConflict() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "milk"])
            _ = try await context.push()
            _ = try await TableClient(base: harness.url).patch("a", ["text": "server milk"])
            try await context.table("todoitem").update(["id": "a", "text": "client milk"])
            #expect(try await context.push().conflicts.count == 1)

            let conflict = try await harness.client.send(.get, "/conflicts/2")
            #expect(conflict.text.contains(#"<a href="/items/a/history">How it got here</a>"#))
            let page = try await harness.client.send(.get, "/items/a/history")
            #expect(page.text.contains("met a newer copy on the service"))
            #expect(page.text.contains(#"<a class="button primary" href="/conflicts/2">Resolve the conflict</a>"#))
            #expect(page.text.contains(">Conflict</span>"))

            try await context.conflicts.resolve(2, with: .useServer)
            let journal = try await harness.client.send(.get, "/journal")
            #expect(journal.text.contains(#"(<a href="/items/a/history">history</a>)"#))
            let settled = try await harness.client.send(.get, "/items/a/history")
            #expect(settled.text.contains("Use Server by a person at "))
            #expect(settled.text.contains(">Decided: Use Server</span>"))
        }
    }
}
