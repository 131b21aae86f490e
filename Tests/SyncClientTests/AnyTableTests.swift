import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Any table the service has, with every column it sends, through store, pull, push and conflicts.
@Suite(.timeLimit(.minutes(10)))
struct AnyTableTests {
    /// A service with `todoitem` and `orders`.
    private static func service(in folder: TemporaryFolder) async throws -> TestService {
        try await TestService.sqlite(in: folder, tables: ["todoitem", "orders"])
    }

    private static let order: Item = [
        "id": "o1", "customer": "ACME", "total": 12.5, "paid": false, "due": "2026-12-01T09:30:00.000Z",
        "lines": 3, "note": nil,
    ]

    @Test func everyColumnTheServiceSendsIsStoredTypedFromItsValues() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(Self.order, table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let pulled = try await context.table("orders").pull(queryId: "all")
        #expect(pulled.written == 1)
        let description = try context.description(of: "orders")
        let types = Dictionary(uniqueKeysWithValues: description.columns.map { ($0.name, $0.type) })
        #expect(
            types == [
                "customer": .text, "total": .real, "paid": .boolean, "due": .date, "lines": .integer, "note": .null,
            ])
        let item = try #require(try context.table("orders").item(id: "o1"))
        for (name, value) in Self.order { #expect(item[name] == (value == .null ? .null : value), "\(name)") }
        #expect(description.mismatchedColumns(of: item).isEmpty)
        // The store remembers the table and its columns' types without being told again.
        try await context.close()
        let reopened = try SyncContext.temporary(in: folder, remote: service.endpoint)
        #expect(try reopened.description(of: "orders") == description)
        #expect(try reopened.table("orders").item(id: "o1") == item)
    }

    @Test func aColumnThatAppearsMidPullIsAddedAndNothingStoredIsLost() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        for index in 0..<9 {
            _ = try await service.rest.insert(
                ["id": .string("o\(index)"), "customer": .string("c\(index)")], table: "orders")
        }
        // The last rows bring a column (the service's dynamic schema adds it) on the pull's third page.
        _ = try await service.rest.patch("o7", ["priority": 2], table: "orders")
        _ = try await service.rest.patch("o8", ["priority": 2.5, "flagged": true], table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let orders = context.table("orders")
        let first = try await orders.pull(queryId: "all", settings: PullSettings(pageSize: 3))
        #expect(first.received == 9)
        #expect(try orders.count() == 9)
        #expect(try orders.item(id: "o0")?["customer"] == "c0")
        #expect(try orders.item(id: "o0")?["priority"] == .null)
        #expect(try orders.item(id: "o7")?["priority"] == 2)
        #expect(try orders.item(id: "o8")?["priority"] == 2.5)
        #expect(try orders.item(id: "o8")?["flagged"] == true)
        let description = try context.description(of: "orders")
        #expect(description.columnType("priority") == .real)
        #expect(description.columnType("flagged") == .boolean)
        // A boolean column that came later is counted like any other.
        #expect(try context.listPage("orders", ListRequest(flag: .init("flagged", true), limit: 5)).total == 1)
        // The next incremental pull asks only for what changed, and a later column joins the others.
        _ = try await service.rest.patch("o1", ["region": "north"], table: "orders")
        let second = try await orders.pull(queryId: "all", settings: PullSettings(pageSize: 3))
        #expect(second.received == 1)
        #expect(try orders.item(id: "o1")?["region"] == "north")
        #expect(try orders.item(id: "o7")?["priority"] == 2)
    }

    @Test func aColumnAddedByAWriteThatFailsIsNeitherInTheTableNorInItsDescription() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.describe("orders")
        struct Refused: Error {}
        await #expect(throws: (any Error).self) {
            try await context.write { db in
                _ = try context.store.widen(db, "orders", for: [("late", "x")])
                #expect(try context.store.description(of: "orders", in: db).columnType("late") == .text)
                // Readers do not see the column before the transaction commits.
                #expect(try context.store.description(of: "orders").columnType("late") == nil)
                throw Refused()
            }
        }
        #expect(try context.description(of: "orders").columnType("late") == nil)
        #expect(try context.read { db in try db.columns(in: "orders").map(\.name) }.contains("late") == false)
        try await context.table("orders").insert(["id": "a", "late": "now"])
        #expect(try context.description(of: "orders").columnType("late") == .text)
    }

    @Test func aValueOfAnotherTypeIsKeptExactlyAndFlagged() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(Self.order, table: "orders")
        _ = try await service.rest.insert(
            ["id": "o2", "customer": "Bolt", "due": "next week", "total": 7, "lines": 1.5], table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let orders = context.table("orders")
        try await orders.pull(queryId: "all")
        let description = try context.description(of: "orders")
        let odd = try #require(try orders.item(id: "o2"))
        #expect(odd["due"] == "next week")
        #expect(description.columnType("due") == .date)
        #expect(description.mismatchedColumns(of: odd) == ["due"])
        // An integer column meeting a fraction becomes real: nothing to flag.
        #expect(description.columnType("lines") == .real)
        #expect(odd["lines"] == 1.5)
        // An edit of another column leaves the odd value as it is, locally and on the service.
        try await orders.update(["id": "o2", "customer": "Bolt & Co"])
        let pushed = try await context.push()
        #expect(pushed.pushed.count == 1)
        #expect(try await service.rest.get("orders", "o2")?["due"] == "next week")
        #expect(try await service.rest.get("orders", "o2")?["customer"] == "Bolt & Co")
        #expect(try orders.item(id: "o2")?["due"] == "next week")
        #expect(try orders.item(id: "o2")?["lines"] == 1.5)
        // A local value of another type is kept too, and flagged.
        try await orders.update(["id": "o1", "paid": "maybe"])
        #expect(try orders.item(id: "o1")?["paid"] == "maybe")
        #expect(description.mismatchedColumns(of: try #require(try orders.item(id: "o1"))) == ["paid"])
        let stored = try context.read { db in
            try Row.fetchOne(db, sql: #"SELECT paid, ":mismatches" FROM orders WHERE id = 'o1'"#)
        }
        #expect(stored?[0] == DatabaseValue.null)
        #expect(stored?[1] == #"{"paid":"maybe"}"#)
    }

    @Test func hostileColumnNamesAreStoredAndShownBack() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(["id": "p", "__proto__": "proto", "constructor": 1], table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let orders = context.table("orders")
        try await orders.pull(queryId: "all")
        #expect(try orders.item(id: "p")?["__proto__"] == "proto")
        // Names the service would refuse still fit the local store: quotes, markup, SQL.
        let hostile: Item = [
            "id": "h", "<script>": "alert(1)", "it's": true, "a\"b": 2, "x); DROP TABLE orders; --": "y",
            "version": "not mine",
        ]
        try await orders.insert(hostile)
        let stored = try #require(try orders.item(id: "h"))
        for name in ["<script>", "it's", "a\"b", "x); DROP TABLE orders; --"] { #expect(stored[name] == hostile[name]) }
        #expect(stored["version"] == .null)
        #expect(try context.listPage("orders", ListRequest(flag: .init("it's", true), limit: 5)).total == 1)
        #expect(try orders.count() == 2)
        await #expect(throws: SyncError.self) {
            try await orders.insert(["id": "m", TableDescription.mismatchesColumn: 1])
        }
        // Names SQLite or FTS5 keep for themselves: kept exactly, and lists and search still work.
        let reserved: Item = [
            "id": "r", "rowid": "r1", "OID": 5, "rank": "first", "orders__search": "s", "label": "findable",
        ]
        try await orders.insert(reserved)
        let kept = try #require(try orders.item(id: "r"))
        for name in ["rowid", "OID", "rank", "orders__search", "label"] { #expect(kept[name] == reserved[name]) }
        #expect(try context.listPage("orders", ListRequest(limit: 10)).items.count == 3)
        #expect(
            try context.listPage("orders", ListRequest(search: "findable", limit: 10)).items.map { $0["id"] } == ["r"])
        #expect(try context.description(of: "orders").columnType("rowid") == nil)
    }

    @Test func aCatchUpBegunBeforeAFlagColumnCameCountsThatColumnToo() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.describe("orders")
        await context.listIndexesCaughtUp()
        let stale = try #require(context.store.listIndexes["orders"])
        func pulled(_ range: Range<Int>, paid: Bool?) async throws {
            let items = range.map { index in
                #"{"id":"r\#(index)","version":"v","customer":"c\#(index)""#
                    + (paid.map { #","paid":\#($0)"# } ?? "") + "}"
            }
            let rows = try context.store.layouts["orders"]!.decode(
                Data(("[" + items.joined(separator: ",") + "]").utf8))
            try await context.write { db in
                let (table, laid) = try context.store.widen(db, "orders", forPulled: rows.rows)
                _ = try PageWriter.apply(laid, to: table, keeping: [], in: db)
            }
        }
        // Pulled rows wait past the mark; a local edit brings a flag column (and catches up a few
        // rows); more pulled rows carry the flag; then a catch-up begun with the index as it was.
        try await pulled(0..<200, paid: nil)
        try await context.table("orders").insert(["id": "c", "paid": true])
        try await pulled(200..<210, paid: true)
        context.store.listIndexer.catchUp(stale, in: context.store.pool)
        await context.listIndexesCaughtUp()
        #expect(try context.listPage("orders", ListRequest(flag: .init("paid", true), limit: 5)).total == 11)
        let kept = try context.read { db in
            try Int.fetchOne(db, sql: "SELECT rows FROM __rowCounts WHERE tableName = 'orders' AND columnName = 'paid'")
        }
        #expect(kept == 11)
    }

    @Test func tableNamesAreLettersDigitsAndUnderscores() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        for bad in ["", "no-dash", "__config", "1st", "orders; DROP", "ünïcode", String(repeating: "a", count: 65)] {
            await #expect(throws: SyncError.invalidTableName(bad)) { try await context.describe(bad) }
        }
        #expect(try await context.describe("Orders_2026").name == "Orders_2026")
        await #expect(throws: SyncError.unknownTable("nope")) { try await context.table("nope").insert(["text": "x"]) }
        #expect(SyncError.invalidTableName("no-dash").description.contains("letters, digits and underscores"))
    }

    @Test func updatesSendOnlyTheColumnsTheUserChanged() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(Self.order, table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let orders = context.table("orders")
        try await orders.pull(queryId: "all")
        // The service's copy changes without a new version (as only its own database can do).
        try withServiceDatabase(service) { db in try db.execute(sql: "UPDATE orders SET customer = 'Other'") }
        try await orders.update(["id": "o1", "total": 13])
        #expect(try await context.push().pushed.count == 1)
        let server = try #require(try await service.rest.get("orders", "o1"))
        #expect(server["total"] == 13)
        #expect(server["customer"] == "Other")
    }

    @Test func mergePickAndJournalWorkOnEveryColumnOfAnyTable() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(Self.order, table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await context.describe("orders")
        let orders = context.table("orders")
        try await orders.pull(queryId: "all")
        // One side each: merged without asking.
        _ = try await service.rest.patch("o1", ["paid": true], table: "orders")
        try await orders.update(["id": "o1", "total": 13])
        #expect(try await context.push().pushed.count == 1)
        var server = try #require(try await service.rest.get("orders", "o1"))
        #expect(server["paid"] == true && server["total"] == 13)
        // Both sides change `due`: a person picks per field, on a column the tutorial never had.
        try await context.conflicts.setPolicy(.ask, for: "orders")
        _ = try await service.rest.patch("o1", ["due": "2027-01-01T00:00:00.000Z", "lines": 4], table: "orders")
        try await orders.update(["id": "o1", "due": "2026-12-24T00:00:00.000Z"])
        #expect(try await context.push().conflicts.count == 1)
        let conflict = try #require(try context.conflicts.all().first)
        let fields = context.conflicts.fieldMerges(of: conflict).map(\.name)
        #expect(Set(fields).isSuperset(of: ["customer", "total", "paid", "due", "lines", "note"]))
        #expect(try await context.conflicts.resolve(conflict.operation.id, picking: ["due": .client]) == .pushed)
        server = try #require(try await service.rest.get("orders", "o1"))
        #expect(server["due"] == "2026-12-24T00:00:00.000Z" && server["lines"] == 4)
        let entries = try context.journal.entries().entries
        #expect(entries.map(\.table) == ["orders", "orders"])
        #expect(entries.first?.result?["lines"] == 4)
        #expect(entries.first?.result?["due"] == "2026-12-24T00:00:00.000Z")
    }

    @Test func bulkDecisionsUndoAndOverturnWorkOnEveryColumnOfAnyTable() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        for index in 0..<3 {
            _ = try await service.rest.insert(
                ["id": .string("o\(index)"), "customer": "c", "total": 1, "due": "2026-12-01T00:00:00.000Z"],
                table: "orders")
        }
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        let orders = context.table("orders")
        try await orders.pull(queryId: "all")
        for index in 0..<3 {
            _ = try await service.rest.patch(
                "o\(index)", ["total": 2, "due": "2027-01-01T00:00:00.000Z"], table: "orders")
            try await orders.update(["id": .string("o\(index)"), "total": 3])
        }
        #expect(try await context.push().conflicts.count == 3)
        let ids = try context.conflicts.all().map(\.operation.id)
        let decision = try await context.conflicts.resolve(ids, with: .useServer)
        #expect(decision.outcomes.values.allSatisfy { $0 == .resolvedByServer || $0 == .pushed })
        #expect(try orders.item(id: "o1")?["total"] == 2)
        #expect(try orders.item(id: "o1")?["due"] == "2027-01-01T00:00:00.000Z")
        // Undo overturns the batch: the losing copy goes to the service, every column of it (as Use
        // Client would have sent it).
        _ = try await context.journal.undo(batch: decision.batch)
        for index in 0..<3 {
            let server = try #require(try await service.rest.get("orders", "o\(index)"))
            #expect(server["total"] == 3)
            #expect(server["due"] == "2026-12-01T00:00:00.000Z")
            #expect(server["customer"] == "c")
        }
        let overturns = try context.journal.entries().entries.filter { $0.decision == .overturn }
        #expect(overturns.count == 3)
        #expect(overturns.allSatisfy { $0.table == "orders" && $0.result?["total"] == 3 })
    }

    @Test func eachTableHasItsOwnDeltaTokenPolicyAndCounts() async throws {
        let folder = try TemporaryFolder()
        let service = try await Self.service(in: folder)
        _ = try await service.rest.insert(["id": "t", "text": "todo"])
        _ = try await service.rest.insert(Self.order, table: "orders")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.describe("orders")
        try await context.conflicts.setPolicy(.serverWins, for: "orders")
        #expect(try await context.table("orders").pull(queryId: "all").received == 1)
        _ = try await service.rest.insert(["id": "o2", "customer": "B"], table: "orders")
        #expect(try await context.table("todoitem").pull(queryId: "all").received == 1)
        #expect(try await context.table("orders").pull(queryId: "all").received == 1)
        #expect(try context.conflicts.policy(for: "orders") == .serverWins)
        #expect(try context.conflicts.policy(for: "todoitem") == .ask)
        #expect(try context.listPage("orders", ListRequest(limit: 1)).total == 2)
        #expect(try context.listPage("todoitem", ListRequest(limit: 1)).total == 1)
    }
}

/// The official server's answers (`shared/spec/reference-server`), pulled as they were captured.
@Suite(.timeLimit(.minutes(10)))
struct ReferenceAnswerColumnTests {
    /// The body of a captured exchange's response.
    private static func responseBody(_ name: String, filePath: String = #filePath) throws -> String {
        var folder = URL(fileURLWithPath: filePath)
        for _ in 0..<3 { folder.deleteLastPathComponent() }
        let candidates = [
            ProcessInfo.processInfo.environment["REFERENCE_SERVER_DIR"].map { URL(fileURLWithPath: $0) },
            folder.deletingLastPathComponent().appendingPathComponent("shared/spec/reference-server"),
            folder.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("shared/spec/reference-server"),
        ].compactMap { $0 }
        let file = try #require(
            candidates.map { $0.appendingPathComponent(name) }.first {
                FileManager.default.fileExists(atPath: $0.path)
            })
        let text = try String(contentsOf: file, encoding: .utf8)
        let response = try #require(text.range(of: "=== RESPONSE ==="))
        let body = try #require(text[response.upperBound...].range(of: "\n\n"))
        return String(text[body.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theOfficialServersPriorityColumnIsKeptWithTheTodo() async throws {
        let page = try Self.responseBody("200-get-list.txt")
        try await withMisbehavingService(answering: { request in
            request.query["$skip"] == nil && request.query["$filter"] == nil ? .json(200, page) : .json(200, "[]")
        }) { service in
            let context = try SyncContext.temporary(in: TemporaryFolder(), remote: service.url)
            let todo = context.table("todoitem")
            let pulled = try await todo.pull()
            #expect(pulled.written == 2)
            #expect(try todo.item(id: "2e56ae14-d1b5-42c4-b5ba-50345f38006e")?["priority"] == 2)
            #expect(try todo.item(id: "item-1")?["priority"] == .null)
            #expect(try context.description(of: "todoitem").columnNames == ["text", "complete", "priority"])
            #expect(try context.description(of: "todoitem").columnType("priority") == .integer)
        }
    }
}

/// What the store takes for a date: exactly the protocol's form, on a real day.
@Suite struct ProtocolDateShapeTests {
    @Test(arguments: [
        ("2026-12-01T09:30:00.000Z", true), ("2024-02-29T23:59:59.999Z", true), ("2026-02-29T00:00:00.000Z", false),
        ("2026-13-01T00:00:00.000Z", false), ("2026-12-01T09:30:00Z", false), ("2026-12-01T09:30:00.000+01:00", false),
        ("2026-12-01 09:30:00.000Z", false), ("2026-12-01T09:30:00.0000Z", false), ("next week", false),
        ("2026-12-01T24:00:00.000Z", false),
    ])
    func onlyTheProtocolsFormOfARealInstantIsADate(text: String, isDate: Bool) {
        #expect(ColumnValue.isDate(text) == isDate)
    }
}

/// Typed input (`--field`, forms) read by the column's type, the same for the CLI and the dashboard.
@Suite struct ColumnInputTests {
    @Test func valuesAreReadByTheColumnsType() throws {
        #expect(try ColumnInput.value("12", as: .integer) == 12)
        #expect(try ColumnInput.value("12.5", as: .real) == 12.5)
        #expect(try ColumnInput.value("no", as: .boolean) == false)
        #expect(try ColumnInput.value("2026-12-01", as: .date) == "2026-12-01T00:00:00.000Z")
        #expect(try ColumnInput.value("2026-12-01T09:30", as: .date) == "2026-12-01T09:30:00.000Z")
        #expect(try ColumnInput.value("null", as: .real) == .null)
        #expect(try ColumnInput.value("null", as: .text) == "null")
        #expect(try ColumnInput.value(#"{"a":1}"#, as: .json) == .object(["a": 1]))
    }

    @Test(arguments: [
        ("abc", TableDescription.ColumnType.integer), ("1.5", .integer), ("abc", .real), ("nan", .real),
        ("maybe", .boolean), ("2026-13-45", .date), ("{oops", .json),
    ])
    func aValueThatDoesNotFitIsRefusedNamingTheColumn(text: String, type: TableDescription.ColumnType) {
        let table = TableDescription(name: "orders", columns: [.init("field", type)])
        #expect(throws: ColumnInputError(column: "field", type: type, text: text)) {
            try ColumnInput.value(text, column: "field", of: table)
        }
    }

    @Test func aNewColumnTakesTheTypeItsValueReadsAs() throws {
        #expect(try ColumnInput.value("true", as: nil) == true)
        #expect(try ColumnInput.value("13", as: nil) == 13)
        #expect(try ColumnInput.value("-2.5", as: nil) == -2.5)
        #expect(try ColumnInput.value("2026-12-01", as: nil) == "2026-12-01T00:00:00.000Z")
        #expect(try ColumnInput.value("north", as: nil) == "north")
        #expect(try ColumnInput.value("inf", as: nil) == "inf")
    }
}
