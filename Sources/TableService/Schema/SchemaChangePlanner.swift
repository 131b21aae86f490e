import SyncProtocol

/// What a schema file changes in a database: compares its declarations with the tables as stored
/// and the changes recorded before, and returns the changes still to make, or refuses the file
/// (a narrowed type, a rename onto an existing column) naming the line and the reason. Pure: the
/// stores read what it needs, and run its ``Plan/statements`` in one transaction.
enum SchemaChangePlanner {
    /// A retired column is renamed `__retired_<name>` and leaves `__columns`: its values stay in
    /// the database, and no read of either store selects or answers it.
    static let retiredPrefix = "__retired_"

    /// `ALTER TABLE table RENAME COLUMN column TO name`, as SQLite and PostgreSQL both take it: a
    /// rename, or a retirement (to ``retiredPrefix`` and the name).
    static func renameSQL(table: String, column: String, to name: String) -> String {
        "ALTER TABLE \(SQLDialect.quoted(table)) RENAME COLUMN \(SQLDialect.quoted(column)) "
            + "TO \(SQLDialect.quoted(name))"
    }

    /// The changes to make.
    struct Plan: Sendable, Equatable {
        /// The new records, in the order they are applied.
        var changes: [SchemaChangeRecord] = []
        /// Columns to rename in the database (`table`, former name, new name) before anything else.
        var renames: [(table: String, from: String, to: String)] = []
        /// Columns to retire (`table`, column as stored), after the renames.
        var retirements: [(table: String, column: String)] = []

        static func == (lhs: Plan, rhs: Plan) -> Bool {
            lhs.changes == rhs.changes && lhs.renames.elementsEqual(rhs.renames) { $0 == $1 }
                && lhs.retirements.elementsEqual(rhs.retirements) { $0 == $1 }
        }

        var isEmpty: Bool { changes.isEmpty && renames.isEmpty && retirements.isEmpty }

        /// The statements that apply it, in order, which both stores run in one transaction: each
        /// column renamed or retired with its row of `__columns`, then the records.
        var statements: [SQLStatement] {
            var statements: [SQLStatement] = []
            for (table, from, to) in renames {
                statements.append(SQLStatement(sql: SchemaChangePlanner.renameSQL(table: table, column: from, to: to)))
                statements.append(
                    SQLStatement(
                        sql: "UPDATE \"__columns\" SET \"name\" = ? WHERE \"tableName\" = ? AND \"name\" = ?",
                        values: [.text(to), .text(table), .text(from)]))
            }
            for (table, column) in retirements {
                let retired = SchemaChangePlanner.retiredPrefix + column
                statements.append(
                    SQLStatement(sql: SchemaChangePlanner.renameSQL(table: table, column: column, to: retired)))
                statements.append(
                    SQLStatement(
                        sql: "DELETE FROM \"__columns\" WHERE \"tableName\" = ? AND \"name\" = ?",
                        values: [.text(table), .text(column)]))
            }
            return statements + changes.map(\.insert)
        }
    }

    /// The plan for `declarations` against the `stored` tables (by lower-cased name, with every
    /// column, retired ones included) and the `recorded` changes, dated `now`. A declaration that
    /// does not fit its stored table (``TableDeclaration/checkFits(_:)``) refuses the file first.
    static func plan(
        _ declarations: [TableDeclaration], stored: [String: TableSchema], recorded: [SchemaChangeRecord], now: Int64
    ) throws(ServiceSchemaError) -> Plan {
        for declaration in declarations {
            if let table = stored[declaration.name.lowercased()] { try declaration.checkFits(table) }
        }
        var plan = Plan()
        for declaration in declarations {
            let table = stored[declaration.name.lowercased()]
            let mine = recorded.filter { $0.table.lowercased() == declaration.name.lowercased() }
            for column in declaration.columns {
                try planColumn(column, of: declaration.name, table, mine, now, into: &plan)
            }
        }
        return plan
    }

    private static func planColumn(
        _ column: TableDeclaration.DeclaredColumn, of tableName: String, _ table: TableSchema?,
        _ recorded: [SchemaChangeRecord], _ now: Int64, into plan: inout Plan
    ) throws(ServiceSchemaError) {
        let place = "Table '\(tableName)', column '\(column.name)'"
        func record(
            _ kind: SchemaChangeRecord.Kind, _ detail: String, backfill: SchemaChangeRecord.Backfill
        )
            -> SchemaChangeRecord
        {
            SchemaChangeRecord(
                table: tableName, column: column.name, kind: kind, detail: detail, appliedAt: now, backfill: backfill)
        }
        func isRecorded(_ change: SchemaChangeRecord) -> Bool {
            recorded.contains { $0.isSameChange(as: change) }
        }
        var hasColumn = table?.column(named: column.name) != nil
        if let old = column.renamedFrom {
            let rename = record(.renamed, old, backfill: .none)
            if !isRecorded(rename) {
                let hasOld = table?.column(named: old) != nil
                if hasOld, hasColumn {
                    throw ServiceSchemaError(
                        "\(place) is renamed from '\(old)', but the table already has a column '\(column.name)'. "
                            + "Rename onto a new name, or retire one of the two columns first.", line: column.line)
                }
                if hasOld, let table {
                    plan.renames.append((table.name, table.column(named: old)!.name, column.name))
                    hasColumn = true
                }
                plan.changes.append(record(.renamed, old, backfill: hasOld ? .pending(after: nil) : .none))
            }
        }
        let types = recorded.filter {
            $0.column.lowercased() == column.name.lowercased() && ($0.kind == .declared || $0.kind == .widened)
        }
        let typeName = column.type.recordName
        if let previous = types.max(by: { $0.appliedAt < $1.appliedAt })?.detail {
            if previous != typeName {
                guard column.type.widens(previous) else {
                    throw ServiceSchemaError(
                        "\(place): the type changes from \(previous) to \(typeName), which narrows it (stored values "
                            + "may not fit). Keep \(previous), widen it (integer to number, date-only to datetime), or "
                            + "declare a new column.", line: column.line)
                }
                var widened = record(.widened, typeName, backfill: .none)
                widened.from = previous
                if widened.rowChange != nil, hasColumn { widened.backfill = .pending(after: nil) }
                plan.changes.append(widened)
            }
        } else {
            plan.changes.append(record(.declared, typeName, backfill: .none))
        }
        if let value = column.defaultValue {
            let defaulted = record(.defaulted, value.jsonText, backfill: .pending(after: nil))
            if !isRecorded(defaulted) { plan.changes.append(defaulted) }
        }
        if column.retired {
            let retired = record(.retired, "", backfill: .none)
            if !isRecorded(retired) {
                plan.changes.append(retired)
                if let table, let stored = table.column(named: column.name) {
                    plan.retirements.append((table.name, stored.name))
                }
            }
        }
    }
}
