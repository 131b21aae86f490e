import GRDB

extension SyncContext {
    /// Why row `itemId` of `table` is as it is: every kept event that touched it, oldest first
    /// (local edits, push outcomes, conflicts, decisions, the pull pages that brought it, purges,
    /// token resets and remote switches), and one sentence about its state now. Read in one
    /// transaction; never writes.
    nonisolated func history(of itemId: String, in table: String) throws(SyncError) -> ItemHistory {
        let description = try store.description(of: table)
        return try read { [store, queue] db in
            let queued = try queue.operations(db, table: table, itemId: itemId)
            // A held operation explains the row first: the item's later ones wait behind it.
            let operation = queued.first(where: \.isHeld) ?? queued.last
            let now = RowExplanation.Now(
                row: try store.readItem(db, table: description, id: itemId), operation: operation,
                error: try operation.flatMap { try queue.error(db, operationId: $0.id) },
                retention: try HistoryLog.retention.count(db))
            let events = try queue.history.events(db, table: table, itemId: itemId)
            return ItemHistory(
                table: table, itemId: itemId, explanation: RowExplanation.sentence(now, events: events),
                events: events, row: now.row, operation: operation)
        }
    }
}
