import FaultProxy
import Foundation
import GRDB
import HTTPServer
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct PullTests {
    @Test func aPageIsWrittenInOrderWithItsDeletesAndRepeatsAndWithoutPendingRows() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let table = try context.store.description(of: "todoitem")
        try await context.table("todoitem").insert(["id": "mine", "text": "local change"])
        try await context.write { db in
            try db.execute(sql: "INSERT INTO todoitem (id, version, text) VALUES ('gone', 'v0', 'old')")
        }
        // More rows than one statement takes, an id twice, a delete between, a row with a queued change.
        let many = (0..<400).map { #"{"id":"r\#($0)","version":"v1","text":"row \#($0)"}"# }
        let items =
            many + [
                #"{"id":"twice","version":"v1","text":"first"}"#, #"{"id":"gone","version":"v2","deleted":true}"#,
                #"{"id":"twice","version":"v2","text":"second"}"#, #"{"id":"mine","version":"v9","text":"theirs"}"#,
                #"{"id":"back","version":"v1","text":"back"}"#, #"{"id":"back","version":"v2","deleted":true}"#,
            ]
        let rows = try context.store.layouts["todoitem"]!.decode(Data(("[" + items.joined(separator: ",") + "]").utf8))
            .rows
        let counts = try await context.write { db in try PageWriter.apply(rows, to: table, keeping: ["mine"], in: db) }
        #expect(counts.written == 403 && counts.deleted == 2 && counts.skipped == 1)
        let todo = context.table("todoitem")
        #expect(try todo.item(id: "twice")?.text == "second")
        #expect(try todo.item(id: "gone") == nil)
        #expect(try todo.item(id: "back") == nil)
        #expect(try todo.item(id: "mine")?.text == "local change")
        #expect(try todo.item(id: "r399")?.text == "row 399")
        #expect(try todo.count() == 402)
    }

    @Test func incrementalPullOf10kRowsThenOnlyTheChanges() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(10_000)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let todo = context.table("todoitem")
        let first = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 500))
        #expect(first.received == 10_000)
        #expect(first.pages == 21)
        #expect(try todo.count() == 10_000)

        try await service.rest.insert(["id": "new", "text": "new"])
        try await service.rest.patch("row-000001", ["text": "changed"])
        try await service.rest.delete("row-000002")
        let second = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 500))
        #expect(second.received == 3)
        #expect(second.deleted == 1)
        #expect(try todo.count() == 10_000)
        #expect(try todo.item(id: "row-000001")?.text == "changed")
        #expect(try todo.item(id: "row-000002") == nil)
        #expect(try todo.item(id: "new") != nil)
        #expect(try await todo.pull(queryId: "all").received == 0)
    }

    @Test func rowsSharingOneUpdatedAtAllArriveOnce() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(250)
        try withServiceDatabase(service) { db in
            try db.execute(sql: "UPDATE todoitem SET updatedAt = (SELECT min(updatedAt) FROM todoitem)")
        }
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let result = try await context.table("todoitem").pull(queryId: "q", settings: PullSettings(pageSize: 50))
        #expect(result.received == 250)
        #expect(result.pages == 6)
        #expect(try context.table("todoitem").count() == 250)
    }

    @Test func serverIgnoringTheKeysetCursorFallsBackToSkip() async throws {
        // A server whose filter cannot compare ids (the cursor makes no progress): the client must
        // fall back to `updatedAt ge` with $skip, and still get every row once.
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(250)
        try withServiceDatabase(service) { db in
            try db.execute(
                sql: "UPDATE todoitem SET updatedAt = (SELECT min(updatedAt) FROM todoitem) WHERE id < 'row-000120'")
        }
        let proxy = try await service.proxy()
        proxy.intercept { request, upstream in
            var rewritten = request
            if let index = rewritten.queryItems.firstIndex(where: { $0.name == "$filter" }),
                let value = rewritten.queryItems[index].value, value.contains(" or ")
            {
                // Keep only the `updatedAt` part of the cursor: `(updatedAt ge T)`.
                let time = value.components(separatedBy: "datetimeoffset'")[1].components(separatedBy: "'")[0]
                rewritten.queryItems[index].value = "(updatedAt ge datetimeoffset'\(time)')"
            }
            return .answer(try await upstream.forward(rewritten))
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let result = try await context.table("todoitem").pull(queryId: "q", settings: PullSettings(pageSize: 50))
        #expect(try context.table("todoitem").count() == 250)
        #expect(result.received >= 250)
        #expect(proxy.requests.count < 40)
        let again = try await context.table("todoitem").pull(queryId: "q", settings: PullSettings(pageSize: 50))
        #expect(again.received <= 1)
    }

    @Test func pullAgainstAServerThatIgnoresPagingTerminates() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(30)
        let proxy = try await service.proxy()
        proxy.intercept { request, upstream in
            // Ignores $filter and $skip: always the same first page.
            var plain = request
            plain.queryItems = request.queryItems.filter { $0.name == "$top" || $0.name == "__includeDeleted" }
            return .answer(try await upstream.forward(plain))
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        // Its second page holds the first page's rows again, from before the cursor asked for.
        let error = await #expect(throws: SyncError.self) {
            try await context.table("todoitem").pull(queryId: "q", settings: PullSettings(pageSize: 10))
        }
        guard case .serviceFault(.ignoredFilter(table: "todoitem", _))? = error else {
            Issue.record("expected the ignored filter to be named, got \(String(describing: error))")
            return
        }
        #expect(try context.table("todoitem").count() == 10)
    }

    @Test func interruptedPullResumesWithoutLoss() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(500)
        let pages = Mutex(0)
        let proxy = try await service.proxy()
        proxy.intercept { _, _ in
            let page = pages.withLock { value -> Int in
                value += 1; return value
            }
            return page == 4 ? .answer(.json(503, #"{"error":"The server is restarting."}"#)) : nil
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let todo = context.table("todoitem")
        await #expect(throws: SyncError.stopped(.serverError(status: 503, message: "The server is restarting."))) {
            try await todo.pull(queryId: "q", settings: PullSettings(pageSize: 100))
        }
        #expect(try todo.count() == 300)
        let resumed = try await todo.pull(queryId: "q", settings: PullSettings(pageSize: 100))
        #expect(resumed.received == 200)
        #expect(try todo.count() == 500)
    }

    @Test func softDeletesRemoveLocalRows() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.insert(["id": "a", "text": "one"])
        try await service.rest.insert(["id": "b", "text": "two"])
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        _ = try await context.table("todoitem").pull(queryId: "q")
        try await service.rest.delete("a")
        let result = try await context.table("todoitem").pull(queryId: "q")
        #expect(result.deleted == 1)
        #expect(try context.table("todoitem").query().compactMap { $0["id"]?.stringValue } == ["b"])
    }

    @Test func pullWithoutQueryIdFetchesEverythingMatching() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(120)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let done = TableQuery(where: .equal("complete", true))
        let result = try await context.table("todoitem").pull(query: done, settings: PullSettings(pageSize: 25))
        #expect(result.received == 40)
        #expect(try context.table("todoitem").count() == 40)
        #expect(try context.table("todoitem").count(TableQuery(where: .equal("complete", false))) == 0)
    }

    @Test func pullPushesPendingChangesFirst() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "mine"])
        let result = try await context.table("todoitem").pull(queryId: "q")
        #expect(result.pushed?.pushed == [1])
        #expect(result.received == 1)
        #expect(try context.operations.all().isEmpty)
        #expect(try context.table("todoitem").item(id: "a")?.version != nil)
    }

    @Test func purgeThenPullFetchesEverythingAgain() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(20)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let todo = context.table("todoitem")
        _ = try await todo.pull(queryId: "q")
        try await todo.update(["id": "row-000001", "text": "local"])
        await #expect(throws: SyncError.pendingOperations(table: "todoitem", count: 1)) { try await todo.purge() }
        #expect(try await todo.purge(force: true) == 20)
        #expect(try context.operations.all().isEmpty)
        #expect(try await todo.pull(queryId: "q").received == 20)
        #expect(try todo.item(id: "row-000001")?.text == "text 1")
    }

    @Test func closeAndReopenMidQueueKeepsTheSameQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let first = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "s", "text": "server"])
        _ = try await first.table("todoitem").pull()
        try await first.table("todoitem").insert(["id": "a", "text": "one"])
        try await first.table("todoitem").update(["id": "s", "text": "edited"])
        try await first.table("todoitem").delete(id: "a")
        try await first.table("todoitem").insert(["id": "b", "text": "two"])
        let before = try first.operations.all()
        try await first.close()

        let second = try SyncContext.temporary(in: folder, remote: nil)
        #expect(try second.operations.all() == before)
        #expect(second.remoteURL == service.endpoint.absoluteString)
        let result = try await second.push()
        #expect(result.pushed.count == 2)
        #expect(try await service.rest.get("todoitem", "s")?.text == "edited")
        #expect(try await service.rest.get("todoitem", "b")?.text == "two")
    }
}
