import Testing

@testable import TableService

/// The service's own tables are read by column name, as each store names its answer's columns.
@Suite struct SQLRowTests {
    @Test(arguments: Backend.all)
    func columnsAreReadByNameWhateverTheirOrderAndCase(_ backend: Backend) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
        let rows = try await store.query(
            SQLStatement(sql: "SELECT 'later' AS \"second\", 7 AS \"First\", NULL AS \"none\""))
        let row = try #require(rows.first)
        #expect(try row.text("second") == "later")
        #expect(try row.integer("first") == 7)
        #expect(try row.optionalText("none") == nil)
    }

    @Test(arguments: Backend.all)
    func aColumnTheStatementDoesNotSelectIsAnErrorNotANull(_ backend: Backend) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
        let row = try #require(try await store.query(SQLStatement(sql: "SELECT 1 AS \"one\"")).first)
        #expect(throws: TableError.storage(.other("The database's answer has no column 'two'."))) {
            try row.integer("two")
        }
        #expect(throws: TableError.self) { try row.text("one") }
    }
}
