import GRDB

/// The queue's part of a move to another service (``RemoteBinding``, ``RemoteSwitchChoice/push``).
extension SyncOperationQueue {
    /// Makes every queued change a change for a service that never had the store's items, pending
    /// for the next push; returns how many there are.
    ///
    /// - An item's first change, when it is an update, becomes an insert of the row as it is then
    ///   (the new service never had the item; one that has an item with this id answers the insert
    ///   with a conflict). A later change of the same item stays an update of what the first sends.
    /// - Deletes are sent as they are: a service without the item answers 404, which settles them.
    /// - Conflicts, refusals and attempts of the old service are forgotten with their errors, the
    ///   bodies sent to it (which only matter for recognising that service's lost answers) and the
    ///   decisions held for the journal (they were about the old service's versions).
    func carryOver(_ db: Database) throws -> Int {
        try OperationErrorRecord.deleteAll(db)
        for operation in try all(db) { try journal.release(db, operationId: operation.id) }
        // One UPDATE in SQL: a CASE per column and the item's first operation read in place.
        try db.execute(
            sql: """
                UPDATE __operations SET
                    kind = CASE WHEN kind = :update AND id = (
                        SELECT min(id) FROM __operations AS first
                        WHERE first.tableName = __operations.tableName AND first.itemId = __operations.itemId
                    ) THEN :insert ELSE kind END,
                    base = CASE WHEN kind = :delete THEN base ELSE NULL END,
                    item = CASE WHEN kind = :delete THEN item ELSE NULL END,
                    state = :pending, attempts = 0, lastAttemptAt = NULL, lastStatus = NULL, message = NULL,
                    recreate = 0, earlierBodies = NULL
                """,
            arguments: [
                "update": OperationKind.update.rawValue, "insert": OperationKind.insert.rawValue,
                "delete": OperationKind.delete.rawValue, "pending": OperationState.pending.rawValue,
            ])
        return try count(db)
    }
}
