import GRDB
import SyncProtocol

extension LocalStore {
    /// Follows the service's column changes in `table`, in the caller's write transaction, and
    /// keeps them for the Data page (``columnChanges(of:in:)``). For a renamed column: a
    /// column the store holds under a former name is renamed in place, values and type kept, and
    /// the queued changes of the table move with it. When the store already has the new column
    /// too (an answer to a push brought it before a page told of the rename), the former column's
    /// values fill the new one's nulls and the former column goes. Returns the table as the store
    /// now holds it.
    func follow(
        _ db: Database, _ table: String, _ changes: ColumnChanges, queue: SyncOperationQueue
    ) throws -> TableDescription {
        try saveColumnChanges(db, table, changes)
        var description = try description(of: table, in: db)
        var changed = false
        for (former, current) in changes.renames.sorted(by: { $0.key < $1.key }) {
            guard let index = description.columns.firstIndex(where: { $0.name == former }),
                TableDescription.canBeColumn(current)
            else { continue }
            if description.columns.contains(where: { $0.name == current }) {
                try db.execute(
                    sql: "UPDATE \(table.quotedSQLName) SET \(current.quotedSQLName) = \(former.quotedSQLName) "
                        + "WHERE \(current.quotedSQLName) IS NULL")
                description.columns.remove(at: index)
                try dropColumn(db, former, of: description)
            } else {
                try db.execute(
                    sql: "ALTER TABLE \(table.quotedSQLName) RENAME COLUMN \(former.quotedSQLName) "
                        + "TO \(current.quotedSQLName)")
                description.columns[index] = TableDescription.Column(current, description.columns[index].type)
            }
            try db.execute(
                sql: "DELETE FROM __columns WHERE tableName = ? AND columnName = ?", arguments: [table, former])
            try queue.renameColumn(db, table: table, from: former, to: current)
            changed = true
        }
        guard changed else { return description }
        try Self.saveColumns(db, description)
        catalog.set(description, in: db)
        return description
    }

    /// Drops `column` from the local table of `table` (which no longer lists it): its flag index
    /// and the list triggers and search index that name it go first.
    private func dropColumn(_ db: Database, _ column: String, of table: TableDescription) throws {
        try db.execute(sql: "DROP INDEX IF EXISTS \("\(table.name)__\(column)".quotedSQLName)")
        try ListIndex(table).create(in: db)
        try db.execute(sql: "ALTER TABLE \(table.name.quotedSQLName) DROP COLUMN \(column.quotedSQLName)")
    }

    /// Where the store keeps the column changes the service announced for `table`.
    static func columnChangesKey(_ table: String) -> String { "columnChanges." + table }

    /// Saves the column changes the service announced for `table`, when they differ from those saved.
    private func saveColumnChanges(_ db: Database, _ table: String, _ changes: ColumnChanges) throws {
        let key = Self.columnChangesKey(table)
        guard try config(db, key) != changes.header else { return }
        try setConfig(db, key, changes.header)
    }

    /// The column changes the service last announced for `table` (none when it announced none).
    func columnChanges(of table: String, in db: Database) throws -> ColumnChanges {
        ColumnChanges(header: try config(db, Self.columnChangesKey(table)))
    }
}
