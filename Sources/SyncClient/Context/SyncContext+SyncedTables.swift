extension SyncContext {
    /// The tables an app (the dashboard) syncs, as saved by ``setSyncedTables(_:)``, in their order;
    /// `["todoitem"]` when none were ever saved.
    public nonisolated func syncedTables() throws(SyncError) -> [String] { try store.syncedTables() }

    /// Saves the tables to sync (duplicates dropped, order kept) and adds each one the store does
    /// not hold yet (with no column until its first pull).
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` for the first name that cannot be a table's,
    ///   and then nothing is saved; ``SyncError/invalidItem(_:)`` for an empty list.
    @discardableResult
    public nonisolated func setSyncedTables(_ names: [String]) async throws(SyncError) -> [String] {
        try await store.setSyncedTables(names)
    }
}
