/// A context's conflict journal: every decision made about a conflict (by a person, a policy or the
/// service), newest first, and what can be done with one afterwards (see ``SyncContext/journal``).
public struct DecisionJournal: Sendable {
    let context: SyncContext

    /// One page of the entries matching `query`, newest first.
    public func entries(_ query: JournalQuery = JournalQuery()) throws(SyncError) -> JournalPage {
        try context.read { [journal = context.queue.journal] db in try journal.page(db, query) }
    }

    /// The entry with this id, if the journal still keeps it.
    public func entry(_ id: String) throws(SyncError) -> JournalEntry? { try context.journalEntry(id) }

    /// How many entries the journal keeps now.
    public func count() throws(SyncError) -> Int {
        try context.read { [journal = context.queue.journal] db in try journal.count(db) }
    }

    /// Whether the item has a queued local change (then its entries cannot be overturned).
    public func hasLocalChange(table: String, itemId: String) throws(SyncError) -> Bool {
        try context.read { [queue = context.queue] db in try !queue.operations(db, table: table, itemId: itemId).isEmpty
        }
    }

    /// Overturns an entry: what lost becomes a new change of the item, sent now against the version
    /// the entry left on the service, and journaled as an overturn when the service applies it; a
    /// service that moved since makes it a new conflict, never a silent overwrite.
    ///
    /// - Throws: ``ConflictDecisionError`` when the entry is unknown, the item has a newer local
    ///   change, or both sides of the entry had deleted the item.
    public func overturn(_ entryId: String, batch: String? = nil) async throws -> OperationOutcome {
        try await context.overturn(entryId, batch: batch)
    }

    /// Undoes a bulk decision: overturns each of its entries, newest first.
    public func undo(batch: String) async throws -> BulkDecision { try await context.undo(batch: batch) }
}

extension SyncContext {
    /// The conflict journal: its entries, and Overturn and Undo.
    public nonisolated var journal: DecisionJournal { DecisionJournal(context: self) }
}
