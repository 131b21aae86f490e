extension SyncContext {
    /// One element after each commit of a local insert, edit or delete (one transaction may hold
    /// several): what auto-sync listens to. ``storeChanges()`` filtered to the commits that are
    /// ``StoreChange/isLocalEdit``. Ends when the context closes.
    public nonisolated func localChanges() -> some AsyncSequence<Void, Never> & Sendable {
        store.changes.localEdits()
    }

    /// One element after each commit of the store in this process, whoever made it (a pull, a push,
    /// a local edit, a conflict decision), naming the tables it wrote: what open pages follow.
    /// Ends when the context closes.
    public nonisolated func storeChanges() -> AsyncStream<StoreChange> { store.changes.changes() }

    /// The revision of the latest commit (see ``StoreChange/revision``); 0 before the first.
    public nonisolated var storeRevision: UInt64 { store.changes.revision }
}
