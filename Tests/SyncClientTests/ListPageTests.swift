import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct ListPageTests {
    /// `count` rows written straight into the store (as a pull writes them), oldest first.
    func store(rows count: Int) async throws -> SyncContext {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let table = try context.store.description(of: "todoitem")
        try await context.write { [store = context.store] db in
            for index in 0..<count {
                try store.writeItem(
                    db, table: table,
                    item: [
                        "id": .string("row-\(index)"), "text": .string("row \(index)"),
                        "complete": .bool(index % 2 == 0),
                    ])
            }
        }
        return context
    }

    func ids(_ page: ListPage) -> [String] { page.items.compactMap { $0["id"]?.stringValue } }

    @Test func keysetPagingVisitsEveryRowOnceWhileRowsAreAddedAndRemoved() async throws {
        let context = try await store(rows: 2500)
        let todos = context.table("todoitem")
        var seen: [String: Int] = [:]
        var removedUnseen: Set<String> = []
        var page = try context.listPage("todoitem", ListRequest(limit: 50))
        var round = 0
        while true {
            for id in ids(page) { seen[id, default: 0] += 1 }
            guard page.hasOlder, let cursor = page.keys.last else { break }
            round += 1
            // Between pages: new todos arrive, one seen row and one not yet seen row go away.
            try await todos.insert(["text": .string("added \(round)")])
            try await todos.insert(["text": .string("added again \(round)")])
            if let old = ids(page).first { try await todos.delete(id: old) }
            let unseen = "row-\(2500 - 60 * round - 75)"
            if 2500 - 60 * round - 75 >= 0, seen[unseen] == nil {
                try await todos.delete(id: unseen)
                removedUnseen.insert(unseen)
            }
            page = try context.listPage("todoitem", ListRequest(position: .olderThan(cursor), limit: 50))
        }
        let original = Set((0..<2500).map { "row-\($0)" })
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(Set(seen.keys) == original.subtracting(removedUnseen))
        #expect(!removedUnseen.isEmpty)
    }

    @Test func pagingBackFromTheLastPageVisitsEveryRowOnce() async throws {
        let context = try await store(rows: 230)
        var seen: [String] = []
        var page = try context.listPage("todoitem", ListRequest(position: .last, limit: 50))
        #expect(!page.hasOlder)
        while true {
            seen = ids(page) + seen
            guard page.hasNewer, let cursor = page.keys.first else { break }
            page = try context.listPage("todoitem", ListRequest(position: .newerThan(cursor), limit: 50))
        }
        #expect(seen == (0..<230).reversed().map { "row-\($0)" })
        let first = try context.listPage("todoitem", ListRequest(limit: 50))
        #expect(ids(first) == Array(seen.prefix(50)))
        #expect(!first.hasNewer && first.hasOlder)
    }

    @Test func countsAreKeptByTheStoreAsRowsChange() async throws {
        let context = try await store(rows: 101)
        let todos = context.table("todoitem")
        func total(_ flag: ListRequest.Flag?) throws -> Int? {
            try context.listPage("todoitem", ListRequest(flag: flag, limit: 1)).total
        }
        #expect(try total(nil) == 101)
        #expect(try total(.init("complete", true)) == 51)
        #expect(try total(.init("complete", false)) == 50)
        try await todos.update(["id": "row-1", "complete": true])
        try await todos.delete(id: "row-2")
        try await todos.insert(["text": "new", "complete": false])
        #expect(try total(nil) == 101)
        #expect(try total(.init("complete", true)) == 51)
        #expect(try total(.init("complete", false)) == 50)
        let counted = try context.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM todoitem") }
        #expect(counted == 101)
        let active = try context.listPage("todoitem", ListRequest(flag: .init("complete", false), limit: 500))
        #expect(active.items.allSatisfy { $0["complete"] != .bool(true) })
        #expect(active.items.count == 50)
    }

    @Test func searchFindsSubstringsIgnoringCaseAndFollowsEveryWrite() async throws {
        let context = try await store(rows: 40)
        let todos = context.table("todoitem")
        try await todos.insert(["id": "milk", "text": "Buy MILK and bread"])
        func found(_ search: String) async throws -> [String] {
            ids(try context.listPage("todoitem", ListRequest(search: search, limit: 50)))
        }
        #expect(try await found("milk") == ["milk"])
        #expect(try await found("k and b") == ["milk"])
        #expect(try await found("mIlK AND") == ["milk"])
        await #expect(
            try found("ow 3").sorted() == [
                "row-3", "row-30", "row-31", "row-32", "row-33", "row-34", "row-35", "row-36", "row-37", "row-38",
                "row-39",
            ])
        #expect(try await found("zebra").isEmpty)
        #expect(try context.listPage("todoitem", ListRequest(search: "milk", limit: 50)).total == nil)
        // Two characters are below the trigram index: still found, by scanning.
        #expect(try await found("MI") == ["milk"])
        try await todos.update(["id": "milk", "text": "buy oat drink"])
        #expect(try await found("milk").isEmpty)
        #expect(try await found("OAT DR") == ["milk"])
        // A write of the whole row that leaves its text as it was keeps it found, and found once.
        try await todos.update(["id": "milk", "complete": true])
        #expect(try await found("OAT DR") == ["milk"])
        try await todos.update(["id": "milk", "text": .null])
        #expect(try await found("OAT DR").isEmpty)
        try await todos.update(["id": "milk", "text": "buy oat drink"])
        #expect(try await found("OAT DR") == ["milk"])
        // Inside one write, the index already holds what that write changed.
        let table = try context.store.description(of: "todoitem")
        let inside = try await context.write { [store = context.store] db in
            try store.writeItem(db, table: table, item: ["id": "row-5", "text": "now about cheese"])
            return try ListReader(queue: context.queue, table: table, request: ListRequest(search: "cheese")).read(db)
        }
        #expect(ids(inside) == ["row-5"])
        try await todos.delete(id: "row-5")
        #expect(try await found("cheese").isEmpty)
        // A search combined with a flag and pages of it.
        let completed = try context.listPage(
            "todoitem", ListRequest(flag: .init("complete", true), search: "row", limit: 5))
        #expect(completed.items.count == 5 && completed.hasOlder)
        #expect(completed.items.allSatisfy { $0["complete"] == .bool(true) })
    }

    @Test func aSearchOfCommonTrigramsAsksTheIndexForItsRarestAndJudgesTheRowsByTheWholeSearch() async throws {
        let context = try await store(rows: 600)
        let todos = context.table("todoitem")
        try await todos.insert(["id": "wanted", "text": "row 777777"])
        try await todos.insert(["id": "decoy", "text": "other 777 row"])
        // Holds every trigram the index is asked for ("row", "w 7", "777"), but not the search.
        try await todos.insert(["id": "near", "text": "row 7 then 777"])
        func found(_ search: String) throws -> [String] {
            ids(try context.listPage("todoitem", ListRequest(search: search, limit: 50))).sorted()
        }
        #expect(try found("row 777777") == ["wanted"])
        #expect(try found("ROW 7777") == ["wanted"], "ASCII case ignored, as by the index")
        #expect(try found("777") == ["decoy", "near", "wanted"])
        #expect(try found("row 59").count == 11, "every trigram common: the whole phrase, as before")
        let index = try #require(context.store.listIndexes["todoitem"]?.search)
        func plan(_ search: String) throws -> (expression: String, narrowsOnly: Bool) {
            try context.read { db in
                try index.matchExpression(
                    for: search, in: db, mark: try #require(context.store.listIndexes["todoitem"]).mark(db))
            }
        }
        let rare = try plan("row 777777")
        #expect(rare.expression.hasPrefix(#""777" AND "#) && rare.narrowsOnly, "\(rare.expression)")
        // "w 1" is in 111 rows ("row 1", "row 1N", "row 1NN"), none of the newest 256: the index
        // is asked for it alone ("row", in every row, would cost more than it narrows).
        let sampled = try plan("row 1")
        #expect(sampled.expression == #""w 1""# && sampled.narrowsOnly, "\(sampled.expression)")
        #expect(try context.listPage("todoitem", ListRequest(search: "row 1", limit: 200)).items.count == 111)
        let common = try plan("row ")
        #expect(common.expression == #""row ""# && !common.narrowsOnly)
        let accented = try plan("café 777")
        #expect(!accented.narrowsOnly, "beyond ASCII the phrase decides, ignoring case as the index does")
    }

    @Test func theIndexIsAskedForTheRarestTrigramsButNotForOnesFarCommoner() {
        #expect(SearchIndex.rarest([("a", 40), ("b", 2), ("c", 9), ("d", 1)]) == #"d AND b AND c"#)
        // Two in none of the rows sampled: one in a tenth of them would cost more than it narrows.
        let twoRare = SearchIndex.rarest([("000", 0), ("0 w", 25), (" 50", 0)])
        #expect(Set(twoRare.components(separatedBy: " AND ")) == ["000", " 50"])
        #expect(SearchIndex.rarest([("x", 30), ("y", 25), ("z", 60)]) == "y AND x AND z", "all alike: all three")
        #expect(SearchIndex.rarest([("p", 3), ("q", 21)]) == "p", "over four times the rarest and more than a few")
    }

    @Test func aRowKeepsItsPlaceInTheListWhenItChanges() async throws {
        let context = try await store(rows: 10)
        let before = ids(try context.listPage("todoitem", ListRequest(limit: 50)))
        try await context.table("todoitem").update(["id": "row-3", "text": "changed"])
        #expect(ids(try context.listPage("todoitem", ListRequest(limit: 50))) == before)
    }
}
