import GRDB

/// The tables an app syncs, kept in `__config`.
extension LocalStore {
    /// Where the synced tables are kept in `__config`.
    static let syncedTablesKey = "syncedTables"

    /// See ``SyncContext/syncedTables()``.
    func syncedTables() throws(SyncError) -> [String] {
        let saved = try read { db in try config(db, Self.syncedTablesKey) }
        guard let saved else { return [TableDescription.todoItem.name] }
        return saved.split(separator: ",").map(String.init)
    }

    /// See ``SyncContext/setSyncedTables(_:)``.
    func setSyncedTables(_ names: [String]) async throws(SyncError) -> [String] {
        var tables: [String] = []
        for name in names where !tables.contains(name) {
            try TableDescription.checkName(name)
            tables.append(name)
        }
        guard !tables.isEmpty else { throw .invalidItem("name at least one table to sync") }
        try await asyncWrite { [self, tables] db in
            for name in tables where catalog.entry(name, for: db) == nil {
                try describe(db, TableDescription(name: name, columns: []))
            }
            try setConfig(db, Self.syncedTablesKey, tables.joined(separator: ","))
        }
        return tables
    }
}
