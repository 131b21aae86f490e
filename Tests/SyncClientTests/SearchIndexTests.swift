import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// The search index catches up after bulk writes, and a search is complete at every moment.
@Suite(.timeLimit(.minutes(10)))
struct SearchIndexTests {
    func ids(_ page: ListPage) -> [String] { page.items.compactMap { $0["id"]?.stringValue } }

    /// Rows as a pulled page brings them.
    func pulledRows(_ context: SyncContext, _ texts: [String: String]) throws -> [PulledRow] {
        let items = texts.sorted { $0.key < $1.key }.map { id, text in
            #"{"id":"\#(id)","version":"v1","updatedAt":"2026-11-24T10:00:00.000Z","text":"\#(text)"}"#
        }
        return try context.store.layouts["todoitem"]!.decode(Data(("[" + items.joined(separator: ",") + "]").utf8)).rows
    }

    /// What the index itself holds for `search` (not the scan of rows past its mark).
    func indexed(_ context: SyncContext, _ search: String) throws -> [String] {
        try context.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT todoitem.id FROM todoitem__search JOIN todoitem ON todoitem.rowid = todoitem__search.rowid
                    WHERE todoitem__search MATCH ? ORDER BY todoitem.id
                    """, arguments: ["\"\(search)\""])
        }
    }

    @Test func pulledRowsAreFoundBeforeTheIndexHoldsThemAndAfter() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        // The catch-up the opening started must not take in the rows written below before they are looked at.
        await context.listIndexesCaughtUp()
        try await context.table("todoitem").insert(["id": "local", "text": "green tea"])
        #expect(try indexed(context, "tea") == ["local"])
        let table = try context.store.description(of: "todoitem")
        let index = try #require(context.store.listIndexes["todoitem"])
        let rows = try pulledRows(context, ["p1": "black Tea", "p2": "coffee", "p3": "TEAPOT"])
        let (inside, mark) = try await context.write { db in
            _ = try PageWriter.apply(rows, to: table, keeping: [], in: db)
            let page = try ListReader(queue: context.queue, table: table, request: ListRequest(search: "tea")).read(db)
            return (page, try index.mark(db))
        }
        // Written as a pull writes: past the mark, not in the index, and found all the same, newest first.
        #expect(try indexed(context, "tea") == ["local"])
        #expect(ids(inside) == ["p3", "p1", "local"])
        #expect(try ids(context.listPage("todoitem", ListRequest(search: "tea", limit: 2))) == ["p3", "p1"])
        let older = try context.listPage(
            "todoitem", ListRequest(search: "tea", position: .olderThan(mark + 2), limit: 2))
        #expect(ids(older) == ["p1", "local"])

        let caughtUp = try await context.write { db in try index.catchUp(db, limit: 100) }
        #expect(caughtUp == 3)
        #expect(try indexed(context, "tea") == ["local", "p1", "p3"])
        #expect(try await context.write { db in try index.catchUp(db, limit: 100) } == 0)
        #expect(try ids(context.listPage("todoitem", ListRequest(search: "tea", limit: 50))) == ["p3", "p1", "local"])
    }

    @Test func rowsChangedOrDeletedPastTheMarkAreIndexedWithTheirLatestText() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let table = try context.store.description(of: "todoitem")
        let index = try #require(context.store.listIndexes["todoitem"])
        try await context.write { db in
            _ = try PageWriter.apply(
                try pulledRows(context, ["a": "apple pie", "b": "banana bread", "c": "cherry cake"]), to: table,
                keeping: [], in: db)
            // Changed and deleted before the index caught up: the triggers leave them alone.
            _ = try PageWriter.apply(try pulledRows(context, ["a": "apricot jam"]), to: table, keeping: [], in: db)
            try db.execute(sql: "DELETE FROM todoitem WHERE id = 'c'")
            try index.catchUp(db, limit: 2)
        }
        #expect(try indexed(context, "apple").isEmpty)
        #expect(try indexed(context, "apricot") == ["a"])
        #expect(try indexed(context, "banana") == ["b"])
        #expect(try indexed(context, "cherry").isEmpty)
        // Past the mark now: the triggers keep the index in step.
        try await context.table("todoitem").update(["id": "b", "text": "blueberry muffin"])
        #expect(try indexed(context, "banana").isEmpty)
        #expect(try indexed(context, "blueberry") == ["b"])
        try await context.table("todoitem").delete(id: "a")
        #expect(try indexed(context, "apricot").isEmpty)
        #expect(try context.read { db in try Bool.fetchOne(db, sql: "PRAGMA integrity_check") } != nil)
        try await context.write { db in
            try db.execute(sql: "INSERT INTO todoitem__search (todoitem__search, rank) VALUES ('integrity-check', 1)")
        }
    }

    @Test func theIndexerCatchesUpAfterAPullInChunks() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let count = ListIndexer.chunk + 321
        // One row through the protocol (it creates the table), the others straight into its database.
        try await service.rest.insert(["id": "r-000000", "text": "text 0", "complete": false])
        try withServiceDatabase(service) { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO todoitem (id, createdAt, updatedAt, version, deleted, text, complete)
                    SELECT printf('r-%06d', i), 1700000000000 + i, 1700000000000 + i, 'v' || i, 0, 'text ' || i, 0
                    FROM n
                    """, arguments: [count - 1])
        }
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        #expect(try await context.table("todoitem").pull(queryId: "all").received == count)
        await context.listIndexesCaughtUp()
        let index = try #require(context.store.listIndexes["todoitem"])
        let (mark, last) = try context.read { db in
            (try index.mark(db), try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM todoitem") ?? -1)
        }
        #expect(mark == last)
        #expect(try indexed(context, "text \(count - 1)") == [String(format: "r-%06d", count - 1)])
        #expect(try context.listPage("todoitem", ListRequest(search: "text", limit: 10)).items.count == 10)
    }

    @Test func aStoreOfAnOlderTodosyncKeepsItsIndexAndCountsAndGetsTheNewTriggers() async throws {
        let folder = try TemporaryFolder()
        do {
            let context = try SyncContext.temporary(in: folder)
            try await context.table("todoitem").insert([
                "id": "old", "text": "written by an older todosync", "complete": true,
            ])
            // As an older todosync left it: every insert counted and indexed by triggers, no mark.
            try await context.write { db in
                for trigger in try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'todoitem'")
                {
                    try db.execute(sql: "DROP TRIGGER \(trigger.quotedDatabaseIdentifier)")
                }
                try db.execute(sql: "DELETE FROM __searchProgress")
                try db.execute(
                    sql: """
                        CREATE TRIGGER todoitem__count_insert AFTER INSERT ON todoitem BEGIN
                        UPDATE __rowCounts SET rows = rows + 1 WHERE tableName = 'todoitem' AND columnName = ''; END;
                        CREATE TRIGGER todoitem__search_insert AFTER INSERT ON todoitem BEGIN
                        INSERT INTO todoitem__search (rowid, text) VALUES (new.rowid, new.text); END;
                        """)
            }
        }
        let context = try SyncContext.temporary(in: folder)
        let (mark, triggers) = try context.read { db in
            (
                try context.store.listIndexes["todoitem"]!.mark(db),
                try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'todoitem'")
            )
        }
        #expect(mark == 1)
        #expect(Set(triggers) == ["todoitem__list_delete", "todoitem__list_flag_complete", "todoitem__list_text"])
        #expect(try indexed(context, "older") == ["old"])
        try await context.table("todoitem").insert(["id": "new", "text": "written by this todosync"])
        #expect(try indexed(context, "written by") == ["new", "old"])
        #expect(try context.listPage("todoitem", ListRequest(limit: 1)).total == 2)
        #expect(try context.listPage("todoitem", ListRequest(flag: .init("complete", true), limit: 1)).total == 1)
    }

    @Test func countsAreExactWhilePulledRowsWaitToBeCountedAndAfterDeletesAtTheTop() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        // The catch-up the opening started must not take in the rows below before they are looked at.
        await context.listIndexesCaughtUp()
        let table = try context.store.description(of: "todoitem")
        let index = try #require(context.store.listIndexes["todoitem"])
        func totals() throws -> [Int?] {
            try [nil, true, false].map { flag in
                try context.listPage("todoitem", ListRequest(flag: flag.map { .init("complete", $0) }, limit: 1)).total
            }
        }
        try await context.table("todoitem").insert(["id": "local", "text": "x", "complete": true])
        try await context.write { db in
            var rows = try pulledRows(context, ["p1": "one", "p2": "two", "p3": "three"])
            rows[0].values[7] = 1.databaseValue
            _ = try PageWriter.apply(rows, to: table, keeping: [], in: db)
        }
        // Pulled rows are past the mark, not counted yet: counts add them.
        #expect(try context.read { db in try index.mark(db) } == 1)
        #expect(try totals() == [4, 2, 2])
        // The newest row goes, so the mark may not stay above the last rowid: a new row must be past it.
        try await context.write { db in
            try index.catchUp(db, limit: 100)
            try db.execute(sql: "DELETE FROM todoitem WHERE id = 'p3'")
        }
        #expect(try context.read { db in try index.mark(db) } == 3)
        try await context.table("todoitem").insert(["id": "late", "text": "late three"])
        #expect(try totals() == [4, 2, 2])
        #expect(try indexed(context, "three") == ["late"])
        try await context.table("todoitem").update(["id": "p1", "text": "one", "complete": false])
        try await context.table("todoitem").delete(id: "local")
        #expect(try totals() == [3, 0, 3])
        let stored = try context.read { db in
            try Int.fetchAll(db, sql: "SELECT rows FROM __rowCounts WHERE tableName = 'todoitem' ORDER BY columnName")
        }
        #expect(stored == [3, 0])
    }

    @Test func openingAStoreWhoseTriggersAreCurrentRecountsNothing() async throws {
        let folder = try TemporaryFolder()
        do {
            let context = try SyncContext.temporary(in: folder)
            try await context.table("todoitem").insert(["id": "a", "text": "x"])
            // A count no recount would leave: it shows that opening again does not recount.
            try await context.write { db in
                try db.execute(sql: "UPDATE __rowCounts SET rows = 41 WHERE columnName = ''")
            }
        }
        let context = try SyncContext.temporary(in: folder)
        #expect(try context.listPage("todoitem", ListRequest(limit: 1)).total == 41)
    }

    @Test func aLargeCatchUpLeavesTheSearchIndexInOneBTree() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        await context.listIndexesCaughtUp()
        let table = try context.store.description(of: "todoitem")
        let index = try #require(context.store.listIndexes["todoitem"])
        // Three chunks' worth, written as a pull writes: each chunk caught up would leave a b-tree.
        let count = 2 * ListIndexer.chunk + 100
        let texts = Dictionary(uniqueKeysWithValues: (0..<count).map { ("r\($0)", "item number \($0)") })
        try await context.write { db in
            _ = try PageWriter.apply(try pulledRows(context, texts), to: table, keeping: [], in: db)
        }
        context.store.listIndexer.catchUp(index, in: context.store.pool)
        await context.listIndexesCaughtUp()
        let bTrees = try context.read { db in
            try Int.fetchOne(db, sql: "SELECT count(DISTINCT segid) FROM todoitem__search_idx")
        }
        #expect(bTrees == 1)
        #expect(try indexed(context, "number 10007") == ["r10007"])
        #expect(try context.listPage("todoitem", ListRequest(search: "number 777", limit: 50)).items.count == 11)
        // FTS5's own check of the index against the rows (it throws on a difference).
        try await context.write { db in
            try db.execute(sql: "INSERT INTO todoitem__search (todoitem__search, rank) VALUES ('integrity-check', 1)")
        }
    }
}
