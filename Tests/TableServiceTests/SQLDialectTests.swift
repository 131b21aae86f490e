import Foundation
import Testing

@testable import TableService

/// One OData query compiles to each database's SQL: numbered placeholders, booleans, null-safe
/// `ne`, string functions and the insertion order differ; values are always bound.
@Suite struct SQLDialectTests {
    static let schema = TableSchema(
        name: "todoitem",
        userColumns: [
            Column(name: "text", type: .string, isSystem: false),
            Column(name: "complete", type: .boolean, isSystem: false),
            Column(name: "later", type: .unknown, isSystem: false),
        ])

    static func compile(_ query: String, _ dialect: SQLDialect) throws -> CompiledQuery {
        let items = URLComponents(string: "/?" + query)!.queryItems!.map { ($0.name, $0.value ?? "") }
        let options = try QueryOptions(queryItems: items, defaultTop: 50, maximumTop: 1000)
        return try QueryCompiler.compile(
            options, schema: schema, dialect: dialect, resolve: ProtocolStyle.v2.resolver(for: schema))
    }

    @Test func filterCompilesToEachDialectWithTheSameBoundValues() throws {
        let query = "$filter=startswith(text,'b') and complete and text ne 'x?' and later eq 2&$inlinecount=allpages"
        let sqlite = try Self.compile(query, .sqlite)
        let postgres = try Self.compile(query, .postgres)
        #expect(
            sqlite.selectSQL
                == "SELECT \"id\", \"createdAt\", \"updatedAt\", \"version\", \"deleted\", \"text\", \"complete\", "
                + "\"later\" FROM \"todoitem\" WHERE ((instr(\"text\", ?) = 1) AND (\"complete\" = 1) AND "
                + "(\"text\" IS NOT ?) AND (\"later\" = ?)) AND \"deleted\" = 0 ORDER BY rowid LIMIT ? OFFSET ?")
        #expect(
            postgres.selectSQL
                == "SELECT * FROM \"todoitem\" WHERE ((strpos(\"text\", $1) = 1) AND (\"complete\" IS TRUE) AND "
                + "(\"text\" IS DISTINCT FROM $2) AND (CAST(\"later\" AS double precision) = $3)) AND NOT \"deleted\" "
                + "AND \"createdAt\" < $4 ORDER BY \"createdAt\", \"id\" LIMIT $5 OFFSET $6")
        #expect(postgres.countSQL?.hasSuffix("AND NOT \"deleted\" AND \"createdAt\" < $4") == true)
        // The same values, and PostgreSQL's horizon (set when the page is read) before $top and $skip.
        #expect(sqlite.selectArguments == [.text("b"), .text("x?"), .integer(2), .integer(50), .integer(0)])
        let horizon = try #require(postgres.horizon)
        #expect(horizon.column == "createdAt")
        #expect(
            postgres.arguments(postgres.selectArguments, horizon: 42) == [
                .text("b"), .text("x?"), .integer(2), .integer(42), .integer(50), .integer(0),
            ])
    }

    /// Lists a client could page or pull by are cut at PostgreSQL's horizon; others are not.
    @Test func positionalListsAreCutAtTheHorizonOnPostgreSQLOnly() throws {
        #expect(try Self.compile("$orderby=updatedAt", .postgres).horizon?.column == "updatedAt")
        #expect(try Self.compile("$filter=updatedAt ge datetimeoffset'2026-01-01T00:00:00Z'", .postgres).horizon != nil)
        #expect(try Self.compile("$orderby=text", .postgres).horizon == nil)
        #expect(try Self.compile("$orderby=updatedAt", .sqlite).horizon == nil)
    }

    @Test func userColumnsSortNullsFirstInPostgreSQLAsInSQLite() throws {
        let postgres = try Self.compile("$orderby=text desc,updatedAt", .postgres)
        #expect(postgres.selectSQL.contains("ORDER BY \"text\" DESC NULLS LAST, \"updatedAt\", \"id\" LIMIT"))
    }
}
