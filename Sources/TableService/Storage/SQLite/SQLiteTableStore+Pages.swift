import Foundation
import GRDB
import SyncProtocol

/// Pages of a table: a compiled query run in one read transaction, encoded as it is read.
extension SQLiteTableStore {
    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage {
        // A filter past SQLite's own limits fails as `.queryTooComplex`: the filter's fault, a 400.
        try await read { db in try Self.runPage(db, query, encoder: encoder) }
    }

    /// Rows are encoded as they are read, inside one read transaction (so the count and the page agree).
    private static func runPage(_ db: Database, _ query: CompiledQuery, encoder: ItemJSONEncoder) throws -> TablePage {
        try checkColumns(db, of: query.schema)
        let count = try query.countSQL.map {
            try Int.fetchOne(db, sql: $0, arguments: arguments(query.countArguments)) ?? 0
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 320 * 64)
        bytes.append(UInt8(ascii: "["))
        let keys = ItemJSONEncoder.ColumnKeys(query.schema)
        var rows = 0
        let cursor = try Row.fetchCursor(db, sql: query.selectSQL, arguments: arguments(query.selectArguments))
        var hasMore: Bool?
        while let row = try cursor.next() {
            if query.probesNextRow, rows == query.top {
                hasMore = true
                break
            }
            if rows > 0 { bytes.append(UInt8(ascii: ",")) }
            try encoder.append(row: row, schema: query.schema, keys: keys, to: &bytes)
            rows += 1
        }
        bytes.append(UInt8(ascii: "]"))
        if query.probesNextRow, hasMore == nil { hasMore = false }
        return TablePage(items: bytes, count: count, rows: rows, hasMore: hasMore)
    }

    /// SQLite's plan for a compiled query (`EXPLAIN QUERY PLAN`), to check that it uses the indexes.
    func queryPlan(_ query: CompiledQuery) async throws(TableError) -> [String] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + query.selectSQL, arguments: Self.arguments(query.selectArguments)
            )
            .map { $0["detail"] as String? ?? "" }
        }
    }

    func rows(of table: String, limit: Int) async throws(TableError) -> (schema: TableSchema, items: [StoredItem]) {
        guard let schema = registry.schema(of: table) else { throw .tableNotFound(table) }
        let items = try await read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(schema.selectList) FROM \(SQLDialect.quoted(schema.name)) "
                    + "ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT ?",
                arguments: [limit]
            ).map { Self.item(from: $0, schema) }
        }
        return (schema, items)
    }
}
