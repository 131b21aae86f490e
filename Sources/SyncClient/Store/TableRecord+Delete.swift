import GRDB

extension TableRecord {
    /// Deletes the rows whose `column` holds `value`, through a statement the connection keeps:
    /// GRDB's `deleteOne(_:key:)` builds its SQL anew at every call, and this runs for every conflict
    /// a policy settles.
    static func delete(_ db: Database, where column: Column, is value: some DatabaseValueConvertible) throws {
        try db.cachedStatement(sql: "DELETE FROM \(databaseTableName) WHERE \(column.name) = ?")
            .execute(arguments: [value])
    }
}
