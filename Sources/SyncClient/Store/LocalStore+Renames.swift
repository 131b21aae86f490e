import GRDB
import SyncProtocol

extension LocalStore {
    /// Follows the service's renamed columns in `table`, in the caller's write transaction: a
    /// column the store holds under a former name (and not yet under the new one) is renamed in
    /// place, values and type kept, and the queued changes of the table move with it. Returns the
    /// table as the store now holds it.
    func followRenames(
        _ db: Database, _ table: String, _ renames: ColumnRenames, queue: SyncOperationQueue
    ) throws -> TableDescription {
        var description = try description(of: table, in: db)
        var changed = false
        for (former, current) in renames.currentNames.sorted(by: { $0.key < $1.key }) {
            guard let index = description.columns.firstIndex(where: { $0.name == former }),
                !description.columns.contains(where: { $0.name == current }), TableDescription.canBeColumn(current)
            else { continue }
            try db.execute(
                sql: "ALTER TABLE \(table.quotedSQLName) RENAME COLUMN \(former.quotedSQLName) TO \(current.quotedSQLName)")
            try db.execute(
                sql: "UPDATE __columns SET columnName = ? WHERE tableName = ? AND columnName = ?",
                arguments: [current, table, former])
            description.columns[index] = TableDescription.Column(current, description.columns[index].type)
            try queue.renameColumn(db, table: table, from: former, to: current)
            changed = true
        }
        guard changed else { return description }
        catalog.set(description, in: db)
        return description
    }
}
