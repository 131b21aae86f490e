import Foundation
import PostgresNIO
import SyncProtocol

/// Pages of a table: positional reads below the horizon, `$skip` pages after the row the previous
/// page ended at (``PageCursors``), the count and the page from one snapshot, encoded as read.
extension PostgresTableStore {
    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage {
        try await onEventLoop { () async throws(TableError) -> TablePage in
            try await self.pageOnEventLoop(query, encoder: encoder)
        }
    }

    private func pageOnEventLoop(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage
    {
        try await openedForRequest()
        guard let cut = query.horizon else { return try await page(query, below: nil, encoder: encoder) }
        // A pull: rows below the horizon only. A page that reaches the end is read again below a
        // horizon past every write acknowledged before the request, when the first cut left some out.
        let reading = try await horizon()
        let page = try await page(query, below: reading.horizon, encoder: encoder)
        guard page.rows < query.top || query.top == 0 else { return page }
        let fresh = try await freshHorizon(after: reading, table: query.schema.name, column: cut.column)
        guard fresh > reading.horizon else { return page }
        return try await self.page(query, below: fresh, encoder: encoder)
    }

    /// The page of `query`, positional reads cut at `horizon`.
    private func page(
        _ query: CompiledQuery, below horizon: Int64?, encoder: ItemJSONEncoder
    ) async throws(TableError)
        -> TablePage
    {
        let cut = { (arguments: [SQLValue]) in horizon.map { query.arguments(arguments, horizon: $0) } ?? arguments }
        let select = PostgresQuery(
            unsafeSQL: query.selectSQL, binds: PostgresStatement.bindings(cut(query.selectArguments)))
        do {
            guard let countSQL = query.countSQL else {
                if let seek = query.seek, query.top > 0 {
                    return try await pageFollowingCursors(
                        query, seek: seek, select: select, conditions: cut(query.countArguments), encoder: encoder)
                }
                return try await pool.withConnection { connection in
                    try await Self.encodePage(
                        try await connection.query(select, logger: self.logger), count: nil, query: query,
                        encoder: encoder
                    ).page
                }
            }
            let countQuery = PostgresQuery(
                unsafeSQL: countSQL, binds: PostgresStatement.bindings(cut(query.countArguments)))
            guard query.top > 0 else {
                // The count alone (`$top=0`): one statement.
                let count = try await pool.rows(countQuery, logger: logger).first?.decode(Int.self) ?? 0
                return TablePage(items: Array("[]".utf8), count: count, rows: 0)
            }
            return try await pool.withConnection { connection in
                // The count and the page from one snapshot.
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: self.logger)
                do {
                    let count =
                        try await connection.query(countQuery, logger: self.logger).collect().first?.decode(
                            Int.self) ?? 0
                    let page = try await Self.encodePage(
                        try await connection.query(select, logger: self.logger), count: count, query: query,
                        encoder: encoder
                    ).page
                    try await connection.query("COMMIT", logger: self.logger)
                    return page
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        } catch {
            throw Self.tableError(error)
        }
    }

    /// A page in `updatedAt, id` or `createdAt, id` order: after the row the previous page ended at
    /// when this instance served it and no row before it has changed since, else by `$skip` (see
    /// ``PageCursors``). Either way, remembers where the page ends.
    private func pageFollowingCursors(
        _ query: CompiledQuery, seek: CompiledQuery.Seek, select: PostgresQuery, conditions: [SQLValue],
        encoder: ItemJSONEncoder
    ) async throws -> TablePage {
        let table = SQLValue.text(query.schema.name)
        if query.skip > 0, let (cursor, position) = cursors.cursor(before: query.skip, in: query) {
            let values =
                conditions + [
                    .integer(cursor.stamp), .text(cursor.id), table, .integer(cursor.rewrites),
                    .integer(Int64(query.limit)), .integer(Int64(query.skip - position)),
                ]
            let seeking = PostgresQuery(unsafeSQL: seek.sql, binds: PostgresStatement.bindings(values))
            let (page, last) = try await pool.withConnection { connection in
                try await Self.encodePage(
                    try await connection.query(seeking, logger: self.logger), count: nil, query: query,
                    encoder: encoder)
            }
            if let last {
                try remember(last, of: query, seek: seek, rewrites: cursor.rewrites, position: query.skip + page.rows)
                return page
            }
        }
        // Read before the page: a rewrite between the two makes the count stale, never wrong.
        var statement = PostgresStatement()
        statement.sql = "SELECT \(PostgresStatement.rewrites(table: statement.bind(table)))"
        let rewrites = try await values(statement) { row in try row.decode(Int64.self) }.first
        let (page, last) = try await pool.withConnection { connection in
            try await Self.encodePage(
                try await connection.query(select, logger: self.logger), count: nil, query: query, encoder: encoder)
        }
        if let last, let rewrites {
            try remember(last, of: query, seek: seek, rewrites: rewrites, position: query.skip + page.rows)
        }
        return page
    }

    private func remember(
        _ row: PostgresRow, of query: CompiledQuery, seek: CompiledQuery.Seek, rewrites: Int64, position: Int
    ) throws {
        let cells = row.makeRandomAccess()
        let cursor = PageCursors.Cursor(
            stamp: try cells[seek.column].decode(Int64.self), id: try cells[SystemColumn.id].decode(String.self),
            rewrites: rewrites)
        cursors.remember(cursor, before: position, in: query)
    }

    /// The page's rows as a JSON array with the count, and its last row (not the probed one).
    private static func encodePage(
        _ rows: PostgresRowSequence, count: Int?, query: CompiledQuery, encoder: ItemJSONEncoder
    ) async throws -> (page: TablePage, last: PostgresRow?) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 320 * 64)
        bytes.append(UInt8(ascii: "["))
        var written = 0
        var layout: ItemJSONEncoder.PostgresLayout?
        var last: PostgresRow?
        var hasMore: Bool? = query.probesNextRow ? false : nil
        for try await row in rows {
            if query.probesNextRow, written == query.top {
                // The probed row: not answered (and the last one, by its LIMIT).
                hasMore = true
                continue
            }
            last = row
            if written > 0 { bytes.append(UInt8(ascii: ",")) }
            if written == 0, encoder.writesRowsDirectly { layout = ItemJSONEncoder.PostgresLayout(row) }
            if let layout {
                try encoder.append(row: row, layout: layout, to: &bytes)
            } else {
                try encoder.append(row: row, to: &bytes)
            }
            written += 1
        }
        bytes.append(UInt8(ascii: "]"))
        return (TablePage(items: bytes, count: count, rows: written, hasMore: hasMore), last)
    }

    func rows(of table: String, limit: Int) async throws(TableError) -> (schema: TableSchema, items: [StoredItem]) {
        guard let schema = try await reloadSchema(of: table) else { throw .tableNotFound(table) }
        var statement = PostgresStatement()
        statement.sql =
            "SELECT * FROM \(SQLDialect.quoted(schema.name)) ORDER BY \"updatedAt\" DESC, \"id\" DESC "
            + "LIMIT \(statement.bind(.integer(Int64(limit))))"
        return (schema, try await run(statement))
    }
}
