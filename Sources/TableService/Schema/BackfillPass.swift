/// The pending backfills of one table, run together: one pass over the table's rows in id order
/// gives each row that any of them changes its new values and one stamp (`updatedAt`, `version`),
/// so a default and a rename of the same table cost one rewrite of each row, not two, and a
/// device pulls each row once.
///
/// Each change keeps its own cursor (a change recorded after an earlier one was half done starts
/// from the beginning): the pass starts after the smallest, and a change applies only to rows
/// after its own cursor.
struct BackfillPass: Sendable, Equatable {
    /// The table, as the changes name it.
    let table: String
    /// The changes stamped together, each with a ``BackfillRowChange``.
    let changes: [SchemaChangeRecord]

    /// The passes of the pending backfills among `records`, one per table, in the order of each
    /// table's first pending change.
    static func passes(_ records: [SchemaChangeRecord]) -> [BackfillPass] {
        var order: [String] = []
        var byTable: [String: [SchemaChangeRecord]] = [:]
        for record in records where record.isPending && record.rowChange != nil {
            let key = record.table.lowercased()
            if byTable[key] == nil { order.append(key) }
            byTable[key, default: []].append(record)
        }
        return order.compactMap { key in
            byTable[key].map { BackfillPass(table: $0[0].table, changes: $0) }
        }
    }

    /// The id after which the pass starts: the smallest cursor, `nil` when a change starts from the
    /// beginning.
    var cursor: String? {
        var smallest: String?
        for change in changes {
            guard case .pending(let after) = change.backfill, let after else { return nil }
            // Byte order, as the databases compare ids (SQLite's BINARY, PostgreSQL's "C").
            if smallest.map({ after.utf8.lexicographicallyPrecedes($0.utf8) }) ?? true { smallest = after }
        }
        return smallest
    }

    /// SQL with `?` placeholders, and the values they take in order.
    struct Fragment: Sendable, Equatable {
        var sql: String
        var values: [SQLValue]
    }

    /// The condition of the rows the pass stamps; column references start with `qualifier`
    /// (`"todo".` or empty). `nil` when no change's column is in `schema`.
    func condition(_ schema: TableSchema, qualifier: String = "") -> Fragment? {
        var parts: [String] = []
        var values: [SQLValue] = []
        for (change, column) in resolved(schema) {
            let (sql, cursor) = Self.changeCondition(change, column: qualifier + column, qualifier: qualifier)
            parts.append(sql)
            values += cursor
        }
        guard !parts.isEmpty else { return nil }
        return Fragment(sql: "(" + parts.joined(separator: " OR ") + ")", values: values)
    }

    /// The assignments of the changed columns (`"priority" = CASE WHEN … THEN ? ELSE … END`), one
    /// per column, each applying its change only where that change's condition holds; empty when
    /// the pass only stamps (a rename).
    func assignments(_ schema: TableSchema, qualifier: String) -> Fragment {
        var columns: [String] = []
        var cases: [String: (sql: String, values: [SQLValue])] = [:]
        for (change, column) in resolved(schema) {
            guard let rowChange = change.rowChange else { continue }
            let quoted = qualifier + column
            let newValue: (sql: String, values: [SQLValue])
            switch rowChange {
            case .fill(let value): newValue = ("?", [SQLValue(value)])
            case .dateToDateTime: newValue = ("\(quoted) || 'T00:00:00.000Z'", [])
            case .stampValues: continue
            }
            let (condition, cursor) = Self.changeCondition(change, column: quoted, qualifier: qualifier)
            if cases[column] == nil { columns.append(column) }
            var current = cases[column] ?? ("", [])
            current.sql += " WHEN \(condition) THEN \(newValue.sql)"
            current.values += cursor + newValue.values
            cases[column] = current
        }
        var fragment = Fragment(sql: "", values: [])
        for column in columns {
            guard let branch = cases[column] else { continue }
            if !fragment.sql.isEmpty { fragment.sql += ", " }
            fragment.sql += "\(column) = CASE\(branch.sql) ELSE \(qualifier)\(column) END"
            fragment.values += branch.values
        }
        return fragment
    }

    /// `UPDATE table SET … FROM rows WHERE match`: each row's changed columns, its stamp (`first` +
    /// its rank − 1), the version of that stamp, and the ``BackfillMarker`` (the version before the
    /// first backfill, while no one wrote the row since). `rows` names the chosen ids ranked from 1
    /// `"b"("id", "n")`, and `match` ties each to the table's row. The values are the columns',
    /// then `first` three times.
    func stampUpdate(
        _ schema: TableSchema, in dialect: SQLDialect, rows: String, match: String, first: Int64
    ) -> Fragment {
        let table = SQLDialect.quoted(schema.name)
        let marker = "\(table).\(SQLDialect.quoted(BackfillMarker.column))"
        // The marker is "<stamp> <version>": its stamp part, its version part.
        let stamp: String
        let version: String
        let markerStamp: String
        let markerVersion: String
        switch dialect {
        case .sqlite:
            stamp = "(? + \"b\".\"n\" - 1)"
            version = "todosync_version(\(stamp))"
            markerStamp = "substr(\(marker), 1, instr(\(marker), ' ') - 1)"
            markerVersion = "substr(\(marker), instr(\(marker), ' ') + 1)"
        case .postgres:
            // Stamps of different writes may be equal there (PostgresHorizon); a row's own move forward.
            stamp = "greatest(?::bigint + \"b\".\"n\" - 1, \(table).\"updatedAt\" + 1)"
            version = "encode(int8send(\(stamp)), 'base64')"
            markerStamp = "split_part(\(marker), ' ', 1)"
            markerVersion = "substr(\(marker), strpos(\(marker), ' ') + 1)"
        }
        let before =
            "CASE WHEN \(markerStamp) = CAST(\(table).\"updatedAt\" AS TEXT) "
            + "THEN \(markerVersion) ELSE \(table).\"version\" END"
        let assignments = assignments(schema, qualifier: "\(table).")
        var sql = "UPDATE \(table) SET "
        if !assignments.sql.isEmpty { sql += assignments.sql + ", " }
        sql +=
            "\"updatedAt\" = \(stamp), \"version\" = \(version), "
            + "\(SQLDialect.quoted(BackfillMarker.column)) = CAST(\(stamp) AS TEXT) || ' ' || \(before) "
            + "FROM \(rows) WHERE \(match)"
        return Fragment(sql: sql, values: assignments.values + [.integer(first), .integer(first), .integer(first)])
    }

    /// Each change with its column's quoted name in `schema` (changes whose column is gone are left out).
    private func resolved(_ schema: TableSchema) -> [(SchemaChangeRecord, String)] {
        changes.compactMap { change in
            schema.column(named: change.column).map { (change, SQLDialect.quoted($0.name)) }
        }
    }

    /// One change's rows: its condition, after its cursor.
    private static func changeCondition(
        _ change: SchemaChangeRecord, column: String, qualifier: String
    ) -> (String, [SQLValue]) {
        let condition = change.rowChange?.condition(column) ?? "FALSE"
        guard case .pending(let after?) = change.backfill else { return ("(\(condition))", []) }
        return ("(\(qualifier)\"id\" > ? AND \(condition))", [.text(after)])
    }
}

extension SchemaChangeRecord {
    /// Whether its backfill still has rows to stamp.
    var isPending: Bool {
        if case .pending = backfill { true } else { false }
    }
}
