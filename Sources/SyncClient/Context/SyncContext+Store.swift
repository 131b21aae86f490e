import SyncProtocol

/// What the store keeps besides the synced rows and the queue: list pages, the logs it trims, the
/// flight recorder, the delta tokens, a redacted copy of itself.
extension SyncContext {
    /// One page of `table`'s rows, newest first. The cost does not grow with the table: pages
    /// are cut by key (no OFFSET), a search goes through the trigram index, a flag through its
    /// index, and totals come from counts the store keeps.
    public nonisolated func listPage(_ table: String, _ request: ListRequest) throws(SyncError) -> ListPage {
        try ListReader.page(table, request, queue: queue)
    }

    /// Returns once the counts and search indexes hold every row pulled so far. Lists are exact
    /// before that too: rows they do not hold yet are counted and searched one by one.
    public nonisolated func listIndexesCaughtUp() async {
        await store.listIndexer.idle()
    }

    /// The columns of `table` the service added, renamed or retired, as its last page announced
    /// them (empty for a table whose schema file changed none): what the Data page marks.
    public nonisolated func columnChanges(of table: String) throws(SyncError) -> ColumnChanges {
        try read { [store] db in try store.columnChanges(of: table, in: db) }
    }

    /// How many of its newest rows `log` keeps.
    public nonisolated func retention(of log: KeptLog) throws(SyncError) -> Int {
        try read { db in try log.retention.count(db) }
    }

    /// Keeps the newest `count` rows of `log` (at least 1) from now on, and drops older ones at once.
    public nonisolated func setRetention(of log: KeptLog, to count: Int) async throws(SyncError) {
        try await write { db in try log.retention.set(db, max(1, count)) }
    }

    /// The recorded exchanges with the service matching `query`, newest first, one page.
    public nonisolated func exchanges(_ query: ExchangeQuery = ExchangeQuery()) throws(SyncError) -> ExchangePage {
        try read { [recorder] db in try recorder.page(db, query) }
    }

    /// Every incremental pull's token: per table and query id, where it stands, when it last moved
    /// and how many rows it brought.
    public nonisolated func deltaTokens() throws(SyncError) -> [DeltaTokenState] {
        try read { [store] db in try store.deltaTokenStates(db) }
    }

    /// Forgets the token of `table`'s pull `queryId` (nil: every query id of the table), so that
    /// the next pull reads every row again. Queued changes, conflicts and the journal are kept: the
    /// rows they hold are left alone by the pull, as always. Waits for a running sync to end first.
    public func resetDeltaTokens(table: String, queryId: String? = nil) async throws(SyncError) {
        _ = try store.description(of: table)
        await jobs.waitUntilIdle()
        try await write { [store] db in try store.resetDeltaTokens(db, table: table, queryId: queryId) }
    }

    /// Writes a consistent copy of the store to `path` (which must not exist) while the store stays
    /// in use, then removes secrets from the copy: the application key and sign-in token, and —
    /// in every text value of every table — those two, `removing`, and any JWT-looking value, as the
    /// flight recorder does. The copy is vacuumed, so no freed page keeps a secret, and checked:
    /// it fails if a secret is still in its bytes.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the copy cannot be made or a secret survives.
    @discardableResult
    public nonisolated func writeRedactedSnapshot(
        to path: String, removing: [String] = []
    ) throws(SyncError)
        -> StoreSnapshot
    {
        let credentials = try remote.credentialsFile.load()
        let secrets = [credentials.applicationKey, credentials.authToken].compactMap { $0 }
        return try StoreSnapshot.write(of: store, to: path, removing: secrets + removing)
    }

    /// What ``writeRedactedSnapshot(to:removing:)`` would copy now (its size: the store file's).
    public nonisolated func snapshotPreview() throws(SyncError) -> StoreSnapshot {
        try StoreSnapshot.preview(of: store)
    }
}
