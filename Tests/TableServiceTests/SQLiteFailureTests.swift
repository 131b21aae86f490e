import Foundation
import GRDB
import TestSupport
import Testing

@testable import TableService

/// SQLite's errors, made for real in a temporary file, become the service's storage failures
/// through ``SQLiteTableStore/failure(_:)``, the one place that reads SQLite's result codes.
@Suite struct SQLiteFailureTests {
    /// One way to make SQLite fail, and the failure it must become.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: StorageFailureKind
        /// Makes SQLite fail in the folder given (a file `t.sqlite` there has a table `t` holding id 'a').
        let fail: @Sendable (URL) throws -> Void

        var testDescription: String { name }

        /// A failure of `sql` run on the file.
        init(_ name: String, _ expected: StorageFailureKind, sql: String, arguments: StatementArguments = []) {
            self.init(name, expected) { folder in
                try DatabaseQueue(path: folder.appendingPathComponent("t.sqlite").path).write { db in
                    try db.execute(sql: sql, arguments: arguments)
                }
            }
        }

        init(_ name: String, _ expected: StorageFailureKind, fail: @escaping @Sendable (URL) throws -> Void) {
            self.name = name
            self.expected = expected
            self.fail = fail
        }
    }

    static let cases: [Case] = [
        Case("an existing primary key", .duplicateID, sql: "INSERT INTO t (id) VALUES ('a')"),
        Case(
            "1100 conditions joined by AND", .queryTooComplex,
            sql: "SELECT 1 WHERE " + Array(repeating: "1", count: 1100).joined(separator: " AND ")),
        Case(
            "200 nested parentheses", .queryTooComplex,
            sql: "SELECT " + String(repeating: "(", count: 200) + "1" + String(repeating: ")", count: 200)),
        Case(
            "more parameters than SQLite allows", .queryTooComplex,
            sql: "SELECT 1 WHERE 1 IN (" + Array(repeating: "?", count: 300_000).joined(separator: ",") + ")",
            arguments: StatementArguments(Array(repeating: 1, count: 300_000))),
        Case(
            "a compound SELECT of 600 terms", .queryTooComplex,
            sql: Array(repeating: "SELECT 1", count: 600).joined(separator: " UNION ALL ")),
        Case("a blob past SQLite's length limit", .tooLarge, sql: "SELECT zeroblob(1000000001)"),
        Case(
            "a table of 2001 columns", .tooLarge,
            sql: "CREATE TABLE wide (" + (0...2000).map { "c\($0)" }.joined(separator: ", ") + ")"),
        Case("a write while another connection writes", .unavailable) { folder in
            let path = folder.appendingPathComponent("t.sqlite").path
            let other = try DatabaseQueue(path: path)
            try DatabaseQueue(path: path).write { db in
                try db.execute(sql: "INSERT INTO t (id) VALUES ('b')")
                try other.write { db in try db.execute(sql: "INSERT INTO t (id) VALUES ('c')") }
            }
        },
        Case("a file that is not a database", .corrupt) { folder in
            let path = folder.appendingPathComponent("garbage.sqlite").path
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
            try DatabaseQueue(path: path).read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        },
        Case("a table that does not exist", .other, sql: "SELECT * FROM missing"),
    ]

    @Test(arguments: cases) func sqliteErrorBecomesItsStorageFailure(_ failing: Case) throws {
        let folder = try TemporaryFolder().url
        try DatabaseQueue(path: folder.appendingPathComponent("t.sqlite").path).write { db in
            try db.execute(sql: "CREATE TABLE t (id TEXT NOT NULL PRIMARY KEY); INSERT INTO t (id) VALUES ('a')")
        }
        let error = try #require(throws: DatabaseError.self) { try failing.fail(folder) }
        #expect(StorageFailureKind(SQLiteTableStore.failure(error)) == failing.expected, "\(error)")
        #expect(StorageFailureKind(thrownBy: SQLiteTableStore.tableError(error)) == failing.expected)
    }

    @Test func storeAnswersAnExistingIDWithTheStoredItemAndATooComplexFilterAsSuch() async throws {
        let store = try SQLiteTableStore(path: nil, clock: TableService.systemClock, tables: ["todoitem"])
        let changes = ItemChanges(id: "a", version: nil, fields: [.init(name: "complete", value: .bool(false))])
        let stored = try await store.insert(into: "todoitem", changes, scope: .all)
        await #expect(throws: TableError.alreadyExists(stored)) {
            _ = try await store.insert(into: "todoitem", changes, scope: .all)
        }
        let filter = Array(repeating: "complete", count: 1100).joined(separator: " and ")
        let options = try QueryOptions(queryItems: [("$filter", filter)], defaultTop: 50, maximumTop: 1000)
        let query = try await store.compile(options, table: "todoitem", style: .v2)
        let error = await #expect(throws: TableError.self) {
            _ = try await store.page(query, encoder: ItemJSONEncoder(style: .v2, selection: query.selection))
        }
        #expect(error.flatMap(StorageFailureKind.init(thrownBy:)) == .queryTooComplex)
    }
}
