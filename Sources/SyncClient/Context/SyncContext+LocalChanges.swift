extension SyncContext {
    /// One element after each local insert, edit or delete (several in a row may come as one):
    /// what auto-sync listens to. Ends when the context closes.
    public nonisolated func localChanges() -> AsyncStream<Void> { monitor.localChanges() }

    /// One element after each commit of the store in this process, whoever made it (a pull, a push,
    /// a local edit, a conflict decision), naming the tables it wrote: what open pages follow.
    /// Ends when the context closes.
    public nonisolated func storeChanges() -> AsyncStream<StoreChange> { store.changes.changes() }

    /// The revision of the latest commit (see ``StoreChange/revision``); 0 before the first.
    public nonisolated var storeRevision: UInt64 { store.changes.revision }
}
