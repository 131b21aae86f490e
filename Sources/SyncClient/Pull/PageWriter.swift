import GRDB
import Storage
import SyncProtocol

/// What writing one pulled page did.
struct PageCounts: Sendable, Equatable {
    var written = 0
    var deleted = 0
    var skipped = 0
}

/// Writes pulled pages into a local table, and judges them: what a pull and a reconcile store, and
/// the check that a pulled row matches the pull's query.
enum PageWriter {
    /// Writes one page in the caller's transaction, with prepared statements; rows of the `pending`
    /// items (those with a queued local change) are left alone. Rows are upserted several at a time
    /// (``valuesPerUpsert``): one statement per row spent as much time building and running the
    /// statement as SQLite spent writing the row.
    static func apply(
        _ rows: [PulledRow], to table: TableDescription, keeping pending: Set<String>, in db: Database
    ) throws -> PageCounts {
        let delete = try db.cachedStatement(sql: "DELETE FROM \(table.name.quotedSQLName) WHERE id = ?")
        let perStatement = max(1, valuesPerUpsert / table.allColumns.count)
        var counts = PageCounts()
        var waiting: [DatabaseValue] = []
        func upsertWaiting() throws {
            guard !waiting.isEmpty else { return }
            let upserted = waiting.count / table.allColumns.count
            let sql = table.upsertSQL(rows: upserted)
            // A full statement serves every page; a shorter one (before a delete, a page's end) is made for once.
            let statement = try upserted == perStatement ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
            try statement.execute(arguments: StatementArguments(positional: waiting))
            counts.written += upserted
            waiting.removeAll(keepingCapacity: true)
        }
        for row in rows {
            guard let id = row.id else { continue }
            if pending.contains(id) {
                counts.skipped += 1
            } else if row.deleted {
                // In order: a row written earlier in the page goes before it is deleted.
                try upsertWaiting()
                try delete.execute(arguments: [id])
                counts.deleted += 1
            } else {
                waiting += row.values
                if waiting.count >= perStatement * table.allColumns.count { try upsertWaiting() }
            }
        }
        try upsertWaiting()
        return counts
    }

    /// What ``apply(_:to:keeping:in:)`` does to each row, as the history keeps it.
    static func pulledRows(_ rows: [PulledRow], keeping pending: Set<String>) -> PulledRows {
        var pulled = PulledRows()
        for row in rows {
            guard let id = row.id else { continue }
            pulled.append(
                id: id, version: row.version,
                kind: pending.contains(id) ? .pullSkipped : row.deleted ? .pulledDelete : .pulled)
        }
        return pulled
    }

    /// At most this many values are bound to one upsert statement (SQLite allows 32,766); 7,000
    /// measured no faster than 1,000.
    static let valuesPerUpsert = 1_000

    /// The id of the first pulled row that does not satisfy `predicate`, judged by SQLite with the
    /// same SQL as local queries; nil when every row does.
    static func firstRow(
        of rows: [PulledRow], outside predicate: TableQuery.Predicate, in table: TableDescription, _ db: Database
    ) throws -> String? {
        let (condition, conditionArguments) = try TableQuery(where: predicate).sqlWhere(table)
        let columns = table.allColumns.map(\.name.quotedSQLName).joined(separator: ", ")
        let row = "(" + sqlParameters(table.allColumns.count) + ")"
        // In chunks, under SQLite's limit on bound parameters.
        let perChunk = max(1, 30_000 / max(1, table.allColumns.count))
        for start in stride(from: 0, to: rows.count, by: perChunk) {
            let chunk = rows[start..<min(start + perChunk, rows.count)]
            let values = Array(repeating: row, count: chunk.count).joined(separator: ", ")
            let sql =
                "WITH page(\(columns)) AS (VALUES \(values)) SELECT id FROM page EXCEPT SELECT id FROM page\(condition)"
            var arguments: [DatabaseValue] = chunk.flatMap(\.values)
            arguments += conditionArguments
            if let id = try String.fetchOne(db, sql: sql + " LIMIT 1", arguments: StatementArguments(arguments)) {
                return id
            }
        }
        return nil
    }
}
