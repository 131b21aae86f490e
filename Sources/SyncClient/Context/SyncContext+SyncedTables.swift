import GRDB

extension SyncContext {
    /// Where the synced tables are kept in `__config`.
    static let syncedTablesKey = "syncedTables"

    /// The tables an app (the dashboard) syncs, as saved by ``setSyncedTables(_:)``, in their order;
    /// `["todoitem"]` when none were ever saved.
    public nonisolated func syncedTables() throws(SyncError) -> [String] {
        let saved = try read { [store] db in try store.config(db, Self.syncedTablesKey) }
        guard let saved else { return [TableDescription.todoItem.name] }
        return saved.split(separator: ",").map(String.init)
    }

    /// Saves the tables to sync (duplicates dropped, order kept) and adds each one the store does
    /// not hold yet (with no column until its first pull).
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` for the first name that cannot be a table's,
    ///   and then nothing is saved; ``SyncError/invalidItem(_:)`` for an empty list.
    @discardableResult
    public nonisolated func setSyncedTables(_ names: [String]) async throws(SyncError) -> [String] {
        var tables: [String] = []
        for name in names where !tables.contains(name) {
            try TableDescription.checkName(name)
            tables.append(name)
        }
        guard !tables.isEmpty else { throw .invalidItem("name at least one table to sync") }
        try await write { [store, tables] db in
            for name in tables where store.catalog.entry(name, for: db) == nil {
                try store.describe(db, TableDescription(name: name, columns: []))
            }
            try store.setConfig(db, Self.syncedTablesKey, tables.joined(separator: ","))
        }
        return tables
    }
}
