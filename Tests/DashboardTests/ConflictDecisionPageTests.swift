import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// The pages beyond Use Client / Use Server / Cancel: journal, overturn, per-field pick, bulk
/// decisions with undo, delete-against-edit wording and policies, on a real dashboard and service.
@Suite(.timeLimit(.minutes(10))) struct ConflictDecisionPageTests {
    /// `count` todos ("todo i") synced, then changed on the service ("server i") and here
    /// ("client i", complete): operations count+1...2·count are in conflict (1...count were the inserts).
    func conflicts(_ harness: TestDashboard, _ count: Int) async throws -> SyncContext {
        let context = harness.dashboard.context
        for index in 0..<count {
            try await context.table("todoitem").insert(["id": .string("t\(index)"), "text": .string("todo \(index)")])
        }
        _ = try await context.push()
        for index in 0..<count {
            let path = "/tables/todoitem/t\(index)"
            let patch = try await harness.client.send(
                .patch, path, json: Data(#"{"text":"server \#(index)"}"#.utf8),
                headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(patch.status == 200)
            try await context.table("todoitem").update([
                "id": .string("t\(index)"), "text": .string("client \(index)"), "complete": true,
            ])
        }
        _ = try await context.push()
        #expect(try context.conflicts.all().count == count)
        return context
    }

    @Test func theConflictsListShowsEachTodosTextAndResolvingLandsOnTheNextConflict() async throws {
        try await withTestDashboard { harness in
            _ = try await conflicts(harness, 3)
            let list = try await harness.client.send(.get, "/conflicts")
            #expect(list.text.contains("client 0") && list.text.contains("client 2"))
            let filtered = try await harness.client.send(.get, "/conflicts?q=client%201")
            #expect(filtered.text.contains("client 1") && !filtered.text.contains("client 2"))
            let resolved = try await harness.submit("/conflicts/5/resolve", ["choice": "use-server"])
            #expect(resolved.headers["location"] == "/conflicts/6")
            let last = try await harness.submit("/conflicts/6/resolve", ["choice": "use-server"])
            #expect(last.headers["location"] == "/conflicts/4", "wraps around to the first one left")
        }
    }

    @Test func thePerFieldPickPreviewsThenPushesTheChosenFields() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 1)
            let page = try await harness.client.send(.get, "/conflicts/2")
            #expect(page.text.contains("Or pick each field"))
            #expect(page.text.contains("changed on both sides"))
            let preview = try await harness.client.send(.get, "/conflicts/2?pick.text=base&pick.complete=client")
            #expect(preview.text.contains(#"<input type="hidden" name="pick.text" value="base">"#))
            #expect(preview.text.contains("Push the previewed result"))
            let bad = try await harness.submit("/conflicts/2/pick", ["pick.text": "nonsense"])
            #expect(bad.status == 400)
            let pushed = try await harness.submit(
                "/conflicts/2/pick", ["pick.text": "base", "pick.complete": "client"])
            #expect(pushed.status == 303)
            #expect(try context.conflicts.all().isEmpty)
            let row = try #require(try context.table("todoitem").item(id: "t0"))
            #expect(row["text"] == "todo 0" && row["complete"] == .bool(true))
            #expect(try context.journal.entries().entries.first?.decision == .pick)
        }
    }

    @Test func theJournalPageShowsFourValuesFiltersPagesAndExports() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 4)
            for id in Int64(5)...7 { try await context.conflicts.resolve(id, with: .useServer) }
            #expect(try await context.conflicts.resolve(8, with: .useClient) == .pushed)
            let page = try await harness.client.send(.get, "/journal")
            #expect(page.status == 200)
            #expect(page.text.contains(#"<a href="/journal" aria-current="page">Journal</a>"#))
            #expect(page.text.contains("Use Server") && page.text.contains("Use Client"))
            for value in ["todo 3", "client 3", "server 3"] { #expect(page.text.contains(value)) }
            #expect(page.text.contains("Overturn"))
            #expect(page.text.contains("keeps the newest 10,000 entries"))
            let paged = try await harness.client.send(.get, "/journal?limit=2")
            #expect(paged.text.contains("Older"))
            let clientOnly = try await harness.client.send(.get, "/journal?decision=use-client")
            #expect(clientOnly.text.contains("client 3") && !clientOnly.text.contains("client 1"))
            let searched = try await harness.client.send(.get, "/journal?q=server%202")
            #expect(searched.text.contains("server 2") && !searched.text.contains("server 1"))
            #expect(try await harness.client.send(.get, "/journal?decision=nope").status == 400)
            let export = try await harness.client.send(.get, "/journal.jsonl")
            let lines = export.text.split(separator: "\n")
            #expect(lines.count == 4)
            #expect(export.headers["content-type"]?.hasPrefix("application/jsonl") == true)
            let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(first?["decision"] as? String == "use-client")
        }
    }

    @Test func theOverturnButtonPushesTheLosingValues() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 1)
            try await context.conflicts.resolve(2, with: .useServer)
            let entry = try #require(try context.journal.entries().entries.first)
            let answer = try await harness.submit("/journal/\(entry.id)/overturn", [:])
            #expect(answer.status == 303)
            #expect(try context.table("todoitem").item(id: "t0")?["text"] == "client 0")
            #expect(try context.journal.entries().entries.first?.decision == .overturn)
        }
    }

    @Test func theDecisionAPIsAnswerEachMistakeWithItsOwnStatus() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 2)
            let token = try await harness.csrfToken()
            func post(_ path: String, _ json: String) async throws -> Int {
                try await harness.client.send(
                    .post, path, json: Data(json.utf8), headers: [.init("X-CSRF-Token")!: token]
                ).status
            }
            // The text changed on both sides: a pick must name it (422), and a whole pick is applied.
            #expect(try await post("/api/conflicts/3/pick", #"{"fields":{"complete":"client"}}"#) == 422)
            #expect(
                try await post("/api/conflicts/3/pick", #"{"fields":{"text":"server","complete":"client"}}"#) == 200)
            // An entry the journal does not keep (404); one whose item changed here since (409).
            #expect(try await post("/api/journal/no-such-entry/overturn", "{}") == 404)
            try await context.conflicts.resolve(4, with: .useServer)
            let entry = try #require(try context.journal.entries().entries.first)
            try await context.table("todoitem").update(["id": "t1", "text": "edited again"])
            let journal = try await harness.client.send(.get, "/journal")
            #expect(journal.text.contains("has a newer local change: push or discard it before overturning."))
            #expect(!journal.text.contains("/journal/\(entry.id)/overturn"), "no Overturn on the changed item")
            #expect(try await post("/api/journal/\(entry.id)/overturn", "{}") == 409)
            #expect(try context.table("todoitem").item(id: "t1")?["text"] == "edited again", "nothing lost")
        }
    }

    @Test func anOutcomeThatDeletedTheTodoCanBeOverturnedFromTheJournal() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 1)
            // The service deletes the todo; the person accepts the delete.
            let deleted = try await harness.client.send(
                .delete, "/tables/todoitem/t0", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(deleted.status == 200)
            try await context.conflicts.resolve(2, with: .cancel)
            #expect(try await context.push().conflicts == [2])
            try await context.conflicts.resolve(2, with: .useServer)
            let entry = try #require(try context.journal.entries().entries.first)
            #expect(entry.result == nil)
            let page = try await harness.client.send(.get, "/journal")
            #expect(page.text.contains("/journal/\(entry.id)/overturn"))
            let answer = try await harness.submit("/journal/\(entry.id)/overturn", [:])
            #expect(answer.status == 303)
            #expect(try context.table("todoitem").item(id: "t0")?["text"] == "client 0")
            let service = try await harness.client.send(
                .get, "/tables/todoitem/t0", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(service.status == 200 && service.text.contains("client 0"))
        }
    }

    @Test func aBulkDecisionIsPreviewedAppliedAndUndoneInOneStep() async throws {
        try await withTestDashboard { harness in
            let context = try await conflicts(harness, 3)
            let preview = try await harness.client.send(.get, "/conflicts/bulk?ids=4&ids=6&choice=use-server")
            #expect(preview.text.contains("Use Server for 2 conflicts"))
            #expect(preview.text.contains("text × 2"))
            #expect(try await harness.client.send(.get, "/conflicts/bulk?choice=use-server").status == 400)
            let token = try await harness.csrfToken()
            let applied = try await harness.client.send(
                .post, "/conflicts/bulk", form: ["_csrf": token, "choice": "use-server", "ids": "4"])
            #expect(applied.status == 303)
            let location = try #require(applied.headers["location"])
            #expect(location.hasPrefix("/journal?batch="))
            #expect(try context.conflicts.all().map(\.id) == [5, 6])
            let batch = String(location.dropFirst("/journal?batch=".count))
            let undo = try await harness.submit("/journal/batches/\(batch)/undo", [:])
            #expect(undo.status == 303)
            #expect(try context.table("todoitem").item(id: "t0")?["text"] == "client 0")
        }
    }

    @Test func aDeleteAgainstAnEditSaysWhatEachButtonDoesAndNeverMakesTheDeletePrimary() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "d", "text": "doomed"])
            _ = try await context.push()
            let deleted = try await harness.client.send(
                .delete, "/tables/todoitem/d", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(deleted.status == 200 || deleted.status == 204)
            try await context.table("todoitem").update(["id": "d", "text": "kept"])
            _ = try await context.push()
            let page = try await harness.client.send(.get, "/conflicts/2")
            #expect(page.text.contains(#"class="primary">Restore it with your values"#))
            #expect(page.text.contains(#"class="danger">Accept the delete"#))
            #expect(!page.text.contains("Use Client"))
        }
    }

    @Test func policiesAreSetInSettingsAndTheJSONAPI() async throws {
        try await withTestDashboard { harness in
            let settings = try await harness.client.send(.get, "/settings")
            #expect(settings.text.contains("Merge — fields changed on one side merge"))
            let saved = try await harness.submit("/settings/policies", ["policy.todoitem": "ask", "retention": "500"])
            #expect(saved.status == 303)
            #expect(try harness.dashboard.context.conflicts.policy(for: "todoitem") == .ask)
            #expect(try harness.dashboard.context.retention(of: .journal) == 500)
            let token = try await harness.csrfToken()
            let api = try await harness.client.send(
                .post, "/api/policies", json: Data(#"{"table":"todoitem","policy":"serverWins"}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(api.status == 200)
            #expect(api.text.contains(#""todoitem":"serverWins""#))
            let bad = try await harness.client.send(
                .post, "/api/policies", json: Data(#"{"policy":"sometimes"}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(bad.status == 422)
        }
    }
}
