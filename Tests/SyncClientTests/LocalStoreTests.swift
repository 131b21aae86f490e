import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct LocalStoreTests {
    @Test func queueSurvivesClosingAndReopeningTheStore() async throws {
        let folder = try TemporaryFolder()
        let first = try SyncContext.temporary(in: folder)
        try await first.table("todoitem").insert(["id": "a", "text": "one"])
        try await first.table("todoitem").update(["id": "b", "text": "two"])
        try await first.table("todoitem").delete(id: "b")
        try await first.setOffline(true)
        let before = try first.operations.all()
        try await first.close()

        let second = try SyncContext.temporary(in: folder)
        #expect(try second.operations.all() == before)
        #expect(second.isOffline)
        #expect(try second.table("todoitem").item(id: "a")?.text == "one")
    }

    @Test func everyCommitIsToldWithTheTablesItWrote() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        var changes = context.storeChanges().makeAsyncIterator()
        let before = context.storeRevision
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        let insert = try #require(await changes.next())
        #expect(insert.revision == before + 1)
        #expect(insert.tables.isSuperset(of: ["todoitem", "__operations"]))
        try await context.setOffline(true)
        let config = try #require(await changes.next())
        #expect(config.revision == insert.revision + 1)
        #expect(context.storeRevision == config.revision)
        try await context.close()
        #expect(await changes.next() == nil)
    }

    @Test func storeHasRealColumnsPerTable() async throws {
        let folder = try TemporaryFolder()
        let tags = TableDescription(name: "tag", columns: [.init("label", .text), .init("weight", .real)])
        let context = try SyncContext.temporary(in: folder, tables: [tags])
        try await context.table("tag").insert(["id": "t1", "label": "home", "weight": 1.5])
        let columns = try context.read { db in try db.columns(in: "tag").map(\.name) }
        #expect(columns == ["id", "version", "createdAt", "updatedAt", "deleted", ":mismatches", "label", "weight"])
        #expect(try context.table("tag").item(id: "t1")?["weight"] == .number(1.5))
        await #expect(throws: SyncError.unknownTable("nope")) { try await context.table("nope").insert(["text": "x"]) }
    }

    @Test func localQueryFiltersSortsAndPages() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        for index in 0..<10 {
            try await todo.insert([
                "id": .string("i\(index)"), "text": .string("task \(9 - index)"), "complete": .bool(index % 2 == 0),
            ])
        }
        let open = TableQuery(where: .equal("complete", false), orderBy: [.ascending("text")], limit: 2, offset: 1)
        #expect(try todo.query(open).compactMap(\.text) == ["task 2", "task 4"])
        #expect(try todo.count(TableQuery(where: .equal("complete", false))) == 5)
        #expect(try todo.count(TableQuery(where: .contains("text", "TASK 1"))) == 1)
        #expect(try todo.query(TableQuery(orderBy: [.descending("text")], limit: 1)).first?.text == "task 9")
    }

    @Test func latestOperationsSummariseTheQueuedItemsAmongMany() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await context.write { db in
            for id in ["b", "c"] {
                try context.store.writeItem(db, table: .todoItem, item: ["id": .string(id), "version": "MQ=="])
            }
        }
        try await todo.insert(["id": "a", "text": "new"])
        try await todo.update(["id": "b", "text": "edited"])
        // More ids than SQLite takes as parameters of one statement is fine too.
        let ids = ["a", "b", "c"] + (0..<40_000).map { "missing-\($0)" }
        let latest = try context.operations.latest(table: "todoitem", itemIds: ids)
        #expect(latest.keys.sorted() == ["a", "b"])
        #expect(latest["a"]?.kind == .insert)
        #expect(latest["b"]?.kind == .update)
        #expect(latest["b"]?.state == .pending)
        #expect(latest["b"]?.id == (try context.operations.all().last?.id))
    }

    @Test func discardRestoresTheRowFromItsBase() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        // A row as pulled from the server (a version makes it a server copy).
        try await context.write { db in
            try context.store.writeItem(db, table: .todoItem, item: ["id": "a", "text": "server", "version": "MQ=="])
        }
        try await todo.update(["id": "a", "text": "local"])
        let operation = try #require(try context.operations.all().first)
        #expect(operation.base?.text == "server")
        try await context.queue.discard(operation.id)
        #expect(try context.operations.all().isEmpty)
        #expect(try todo.item(id: "a")?.text == "server")

        try await todo.delete(id: "a")
        try await context.queue.discard(try #require(try context.operations.all().first).id)
        #expect(try todo.item(id: "a")?.text == "server")

        try await todo.insert(["id": "new", "text": "x"])
        try await context.queue.discard(try #require(try context.operations.all().first).id)
        #expect(try todo.item(id: "new") == nil)
    }

    @Test func offlineModeQueuesEditsAndRefusesToSync() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.setOffline(true)
        try await context.table("todoitem").insert(["text": "offline"])
        await #expect(throws: SyncError.stopped(.offline)) { try await context.push() }
        await #expect(throws: SyncError.stopped(.offline)) { try await context.table("todoitem").pull() }
        let status = try context.status()
        #expect(status.pending == 1)
        #expect(status.offline)
        #expect(status.lastSync?.stopReason == .offline)
    }

    /// With the default window both requests go out at once and neither is answered; with a window
    /// of 1 the push stops after the first.
    @Test(arguments: [
        (SyncConfiguration.defaultPushWindow, ["insert a attempted", "insert b attempted"]),
        (1, ["insert a attempted", "insert b pending"]),
    ])
    func pushToAnUnreachableServerStopsAndKeepsTheQueue(window: Int, expected: [String]) async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder(), pushWindow: window)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        try await context.table("todoitem").insert(["id": "b", "text": "two"])
        let error = await #expect(throws: SyncError.self) { try await context.push() }
        guard case .stopped(.unreachable)? = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(try queueShape(context) == expected)
        #expect(context.progress == .idle)
    }

    @Test func purgeIsRefusedWithPendingOperationsUnlessForced() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.pendingOperations(table: "todoitem", count: 1)) { try await todo.purge() }
        try await context.write { db in
            try context.store.setConfig(db, LocalStore.deltaTokenKey(table: "todoitem", queryId: "q"), "{}")
        }
        #expect(try await todo.purge(force: true) == 1)
        #expect(try context.operations.all().isEmpty)
        #expect(try todo.count() == 0)
        #expect(
            try context.read { db in
                try context.store.config(db, LocalStore.deltaTokenKey(table: "todoitem", queryId: "q"))
            } == nil)
    }

    @Test func purgeWithAQueryRemovesOnlyMatchingRows() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.write { db in
            for (id, done) in [("a", true), ("b", false), ("c", true)] {
                try context.store.writeItem(db, table: .todoItem, item: ["id": .string(id), "complete": .bool(done)])
            }
        }
        #expect(try await context.table("todoitem").purge(query: TableQuery(where: .equal("complete", true))) == 2)
        #expect(try context.table("todoitem").query().compactMap { $0["id"]?.stringValue } == ["b"])
    }

    @Test func queryRendersAsODataFilter() {
        let query = TableQuery(where: .and([.equal("complete", false), .contains("text", "it's")]))
        #expect(query.odataFilter == "((complete eq false) and substringof('it''s', text))")
    }
}
