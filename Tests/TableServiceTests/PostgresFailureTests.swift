import Foundation
import TestSupport
import Testing

@testable import TableService

/// PostgreSQL's errors, made for real on the test cluster, become the service's storage failures
/// through ``PostgresTableStore/failure(_:)``, the one place that reads SQLSTATEs.
@Suite(.enabled(if: TestPostgres.isRequired)) struct PostgresFailureTests {
    /// One statement PostgreSQL (or postgres-nio) refuses, and the failure it must become.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: StorageFailureKind
        let statement: PostgresStatement

        var testDescription: String { name }

        init(_ name: String, _ expected: StorageFailureKind, sql: String) {
            self.init(name, expected, PostgresStatement(sql: sql))
        }

        init(_ name: String, _ expected: StorageFailureKind, _ statement: PostgresStatement) {
            self.name = name
            self.expected = expected
            self.statement = statement
        }
    }

    static let cases: [Case] = [
        Case(
            "a table name already in __tables (unique violation)", .duplicateID,
            sql: #"INSERT INTO "__tables" ("name", "createdAt") VALUES ('todoitem', 0)"#),
        Case(
            "an expression 100,000 terms deep (stack depth)", .queryTooComplex,
            sql: "SELECT 1 WHERE " + Array(repeating: "1", count: 100_000).joined(separator: " + ") + " > 0"),
        Case("70,000 parameters (refused by postgres-nio)", .queryTooComplex, manyParameters(70_000)),
        Case(
            "a table of 1601 columns", .tooLarge,
            sql: "CREATE TEMPORARY TABLE wide (" + (0...1600).map { "c\($0) int" }.joined(separator: ", ") + ")"),
        Case("a connection the server ends", .unavailable, sql: "SELECT pg_terminate_backend(pg_backend_pid())"),
        Case("a table that does not exist", .other, sql: "SELECT * FROM missing"),
    ]

    static func manyParameters(_ count: Int) -> PostgresStatement {
        var statement = PostgresStatement()
        let placeholders = (0..<count).map { statement.bind(.integer(Int64($0))) }
        statement.sql = "SELECT 1 WHERE 1 IN (\(placeholders.joined(separator: ",")))"
        return statement
    }

    @Test(arguments: cases) func postgresErrorBecomesItsStorageFailure(_ failing: Case) async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { server in
            let store = try #require(server.running.service.store as? PostgresTableStore)
            let error = await #expect(throws: TableError.self) {
                _ = try await store.values(failing.statement) { _ in () }
            }
            #expect(
                error.flatMap(StorageFailureKind.init(thrownBy:)) == failing.expected, "\(String(describing: error))")
        }
    }

    @Test func storeAnswersAnExistingIDWithTheStoredItem() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { server in
            let store = try #require(server.running.service.store as? PostgresTableStore)
            let changes = ItemChanges(id: "a", version: nil, fields: [.init(name: "text", value: .string("one"))])
            let stored = try await store.insert(into: "todoitem", changes, scope: .all)
            await #expect(throws: TableError.alreadyExists(stored)) {
                _ = try await store.insert(into: "todoitem", changes, scope: .all)
            }
        }
    }

}
