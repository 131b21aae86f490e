import SyncProtocol

extension SyncContext {
    /// The columns of `table` the service added, renamed or retired, as its last page announced
    /// them (empty for a table whose schema file changed none): what the Data page marks.
    public nonisolated func columnChanges(of table: String) throws(SyncError) -> ColumnChanges {
        try read { [store] db in try store.columnChanges(of: table, in: db) }
    }
}
