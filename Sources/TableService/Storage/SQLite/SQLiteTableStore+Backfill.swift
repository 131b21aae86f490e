import Foundation
import GRDB
import SyncProtocol

/// A backfill batch in SQLite: one transaction that picks the next rows of a ``BackfillPass`` on
/// the id keyset, stamps them with one `UPDATE … FROM` (stamps numbered in SQL by the rows' rank),
/// and moves the cursors of the pass's changes. It runs on the single writer, so no write comes
/// between choosing the rows and stamping them.
extension SQLiteTableStore {
    /// The SQL function that turns a stamp into its version (``StoredItem/version(for:)``).
    static let versionFunction = DatabaseFunction("todosync_version", argumentCount: 1, pure: true) { values in
        guard let stamp = Int64.fromDatabaseValue(values[0]) else { return nil }
        return StoredItem.version(for: stamp)
    }

    func backfillBatch(_ pass: BackfillPass, limit: Int) async throws(TableError) -> BackfillBatch {
        let clock = ContinuousClock()
        let stamped: (count: Int, last: ChangeCursor?, held: Duration, waited: Bool) = try await writeNow { db in
            let started = clock.now
            // The changes as committed (a previous start may have finished some).
            let records = try Self.records(db)
            let pending = pass.changes.compactMap { change in
                records.first { $0.isSameChange(as: change) && $0.isPending }
            }
            let current = BackfillPass(table: pass.table, changes: pending)
            guard !pending.isEmpty, let schema = self.registry.schema(of: pass.table),
                let condition = current.condition(schema)
            else { return (0, nil, clock.now - started, false) }
            try Self.addBackfillMarker(db, to: schema.name)
            let table = SQLDialect.quoted(schema.name)
            let rowid = Self.rowidName(schema)
            var rangeSQL = "SELECT \(rowid.select)\"id\" FROM \(table) WHERE \(condition.sql)"
            var rangeValues = condition.values
            if let cursor = current.cursor {
                rangeSQL += " AND \"id\" > ?"
                rangeValues.append(.text(cursor))
            }
            let range = try Row.fetchOne(
                db, sql: "SELECT count(*), max(\"id\") FROM (\(rangeSQL) ORDER BY \"id\" LIMIT ?)",
                arguments: Self.arguments(rangeValues) + [limit])
            let count: Int = range?[0] ?? 0
            var last: ChangeCursor?
            if count > 0, let lastID: String = range?[1] {
                let first = try self.nextTimestamp(db, schema, count: Int64(count))
                let numbered =
                    "(SELECT *, row_number() OVER (ORDER BY \"id\") AS \"n\" "
                    + "FROM (\(rangeSQL) AND \"id\" <= ?)) AS \"b\""
                let statement = current.stampUpdate(
                    schema, in: .sqlite, rows: numbered, match: rowid.join, first: first)
                if !self.backfillFunctionInstalled.withLock({ $0 }) {
                    db.add(function: Self.versionFunction)
                    self.backfillFunctionInstalled.withLock { $0 = true }
                }
                try db.execute(
                    sql: statement.sql, arguments: Self.arguments(statement.values + rangeValues + [.text(lastID)]))
                last = ChangeCursor(updatedAt: first + Int64(count) - 1, id: lastID)
            }
            for change in pending {
                let recorded = change.batchRecorded(count: count, lastID: last?.id, limit: limit)
                try db.execute(sql: recorded.sql, arguments: Self.arguments(recorded.values))
            }
            // Writes under way besides this one wait for its commit.
            return (count, last, clock.now - started, (self.writesUnderWay ?? 0) > 1)
        }
        if let last = stamped.last {
            changes.published(.init(table: pass.table, cursor: last, owner: nil))
        }
        return BackfillBatch(rows: stamped.count, held: stamped.held, writersWaited: stamped.waited)
    }

    /// How the stamping `UPDATE` finds the rows it numbered: by rowid (a third faster than by id,
    /// which goes through the id index), under a name no user column shadows; by id if a table
    /// has columns named `rowid`, `_rowid_` and `oid`.
    private static func rowidName(_ schema: TableSchema) -> (select: String, join: String) {
        guard let name = ["rowid", "_rowid_", "oid"].first(where: { schema.column(named: $0) == nil }) else {
            return ("", "\(SQLDialect.quoted(schema.name)).\"id\" = \"b\".\"id\"")
        }
        return ("\(name) AS \"r\", ", "\(SQLDialect.quoted(schema.name)).\(name) = \"b\".\"r\"")
    }
}
