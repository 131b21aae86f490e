import Foundation
import GRDB
import Storage
import SyncProtocol

/// The persistent queue of local changes: the only code that reads or writes `__operations` and
/// `__errors`, through their rows' types (``OperationRecord``, ``OperationErrorRecord``).
///
/// An operation moves through the states of ``OperationState``:
///
/// ```
/// enqueue ─▶ pending ─beginAttempt─▶ inFlight ─complete────────▶ (gone)
///               ▲  ▲                    │ ├─recordConflict──▶ conflict ─adoptServerVersion─▶ pending
///               │  └─cancel─────────────┼─┤                      └─useServer──────────────▶ (gone)
///               │                       │ └─recordFailure───▶ failed ─cancel──▶ pending
///               └─rebase── attempted ◀──┴─markAttempted (no answer, stop, cancel; a crash on reopen)
/// ```
///
/// A push marks operations in flight a batch ahead of their requests; those it does not send after
/// all (it stopped first) are released back to the state they had (pending or attempted).
///
/// Beside its state, an operation is held or not (``TableOperation/hold``, the `heldAt` and
/// `heldReason` columns), a second small machine that a person drives (`SyncOperationQueue+Hold`,
/// decided by ``QueueActionRule/decide(_:state:isHeld:earlier:)``):
///
/// ```
/// not held ─hold (pending, attempted, failed)─▶ held ─release─▶ not held
/// ```
///
/// A held operation keeps its state (pending, attempted or failed) underneath; a push never sends
/// it nor any later operation of its item (they are not ``sendable(_:)``), a pull leaves its row
/// alone, and a remote switch or purge counts it as a queued change. An edit of its item collapses
/// into it as into any queued operation, and it stays held. Retry now (``prepareRetry(_:id:)``)
/// takes a failed operation back to pending (`failed ─cancel─▶ pending` above) before a push.
///
/// Local edits call ``enqueue(_:kind:table:itemId:before:)`` inside the transaction that changes the
/// row. Push transitions (`SyncOperationQueue+Push`) and conflict resolutions
/// (`SyncOperationQueue+Resolution`) run their own transactions, each changing the row and the queue
/// together. Methods that take a `Database` run inside the caller's transaction.
struct SyncOperationQueue: Sendable {
    let store: LocalStore
    /// Where a decision held with an operation is settled when the service applies it.
    let journal = ConflictJournal()
    /// Where each change, push outcome and decision of a row is noted.
    let history = HistoryLog()

    /// The queue's columns, as its extensions name them.
    typealias Columns = OperationRecord.Columns

    /// The operations of `table` (nil: of every table).
    func operations(of table: String?) -> QueryInterfaceRequest<OperationRecord> {
        table.map { OperationRecord.filter(Columns.tableName == $0) } ?? OperationRecord.all()
    }

    // MARK: Reading

    // The two reads every local edit and every push answer make go through cached statements: a
    // query-interface request prepares its statement anew each time (a third of a local insert's time).

    func operation(_ db: Database, id: Int64) throws -> TableOperation? {
        try OperationRecord.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM \(OperationRecord.databaseTableName) WHERE id = ?"), arguments: [id]
        )?.operation
    }

    /// The operation, or ``SyncError/operationNotFound(_:)``.
    func existingOperation(_ db: Database, id: Int64) throws -> TableOperation {
        guard let operation = try operation(db, id: id) else { throw SyncError.operationNotFound(id) }
        return operation
    }

    /// The item's operations in push order (at most one queued, plus one in flight or settled earlier).
    func operations(_ db: Database, table: String, itemId: String) throws -> [TableOperation] {
        try OperationRecord.fetchAll(
            db.cachedStatement(
                sql: "SELECT * FROM \(OperationRecord.databaseTableName) WHERE tableName = ? AND itemId = ? ORDER BY id"
            ),
            arguments: [table, itemId]
        ).map(\.operation)
    }

    /// Every operation in push order, optionally one table's.
    func all(_ db: Database, table: String? = nil) throws -> [TableOperation] {
        try operations(of: table).order(Columns.id).fetchAll(db).map(\.operation)
    }

    /// The operations in `state`, in push order.
    func all(_ db: Database, in state: OperationState) throws -> [TableOperation] {
        try OperationRecord.filter(Columns.state == state.rawValue).order(Columns.id).fetchAll(db).map(\.operation)
    }

    /// Summaries of the operations of several items, in push order.
    func summaries(_ db: Database, table: String, itemIds: [String]) throws -> [OperationSummary] {
        guard !itemIds.isEmpty else { return [] }
        let request = OperationRecord.select(
            Columns.id, Columns.itemId, Columns.kind, Columns.state, (Columns.heldAt != nil).forKey("held")
        ).filter(Columns.tableName == table && itemIds.contains(Columns.itemId)).order(Columns.id)
        return try Row.fetchAll(db, request).map { row in
            OperationSummary(
                id: row[Columns.id], itemId: row[Columns.itemId], kind: try OperationRecord.known(row, Columns.kind),
                state: try OperationRecord.known(row, Columns.state), isHeld: row["held"])
        }
    }

    /// How many operations (of `table`, or of every table) are in each state.
    func counts(_ db: Database, table: String? = nil) throws -> [OperationState: Int] {
        try counts(db, of: operations(of: table))
    }

    /// How many of the operations `request` selects are in each state.
    func counts(_ db: Database, of request: QueryInterfaceRequest<OperationRecord>) throws -> [OperationState: Int] {
        let request = request.select(Columns.state, GRDB.count(Column.rowID).forKey("count")).group(Columns.state)
        var counts: [OperationState: Int] = [:]
        for row in try Row.fetchAll(db, request) {
            counts[try OperationRecord.known(row, Columns.state), default: 0] += row["count"] as Int
        }
        return counts
    }

    /// The condition on an `__operations` row (not aliased) that a push sends it: pending or
    /// attempted, and neither it nor an earlier operation of its item held.
    static let sendableSQL = """
        state IN (\(OperationState.sendableSQL)) AND NOT EXISTS (
            SELECT 1 FROM __operations AS holding
            WHERE holding.tableName = __operations.tableName AND holding.itemId = __operations.itemId
                AND holding.id <= __operations.id AND holding.heldAt IS NOT NULL)
        """

    /// The operations a push sends, in push order (none held, none behind a held one).
    private var sendableOperations: QueryInterfaceRequest<OperationRecord> {
        OperationRecord.filter(sql: Self.sendableSQL).order(Columns.id)
    }

    /// The operations a push sends, in push order, with the item each one changes.
    func sendable(_ db: Database) throws -> [(id: Int64, table: String, itemId: String)] {
        try Row.fetchAll(db, sendableOperations.select(Columns.id, Columns.tableName, Columns.itemId)).map {
            ($0[Columns.id], $0[Columns.tableName], $0[Columns.itemId])
        }
    }

    /// The table of the first operation a push sends; nil when none waits.
    func firstSendableTable(_ db: Database) throws -> String? {
        try sendableOperations.select(Columns.tableName, as: String.self).fetchOne(db)
    }

    /// How many operations of `table` a push would send.
    func sendableCount(_ db: Database, table: String) throws -> Int {
        try sendableOperations.filter(Columns.tableName == table).fetchCount(db)
    }

    /// How many operations `table` has, whatever their state (nil: every table).
    func count(_ db: Database, table: String? = nil) throws -> Int {
        try operations(of: table).fetchCount(db)
    }

    /// The ids of `table`'s items that have an operation (pull leaves their rows alone).
    func itemIds(_ db: Database, table: String) throws -> Set<String> {
        try OperationRecord.filter(Columns.tableName == table).select(Columns.itemId, as: String.self).distinct()
            .fetchSet(db)
    }

    /// The last error of an operation.
    func error(_ db: Database, operationId: Int64) throws -> OperationError? {
        try OperationErrorRecord.fetchOne(db, key: operationId)?.error
    }

    // MARK: Writing

    /// Adds an operation at the end of the queue; returns its id.
    @discardableResult
    func insert(_ db: Database, _ operation: TableOperation) throws -> Int64 {
        try OperationRecord(operation: operation).insert(db)
        return db.lastInsertedRowID
    }

    /// Saves every field of the operation but its identity, hold and earlier bodies.
    func update(_ db: Database, _ operation: TableOperation) throws {
        // A cached statement: this runs several times for every conflict a policy settles, and
        // GRDB's `update(_:columns:)` builds its SQL anew each time.
        try db.cachedStatement(sql: OperationRecord.updateSQL).execute(
            arguments: StatementArguments(OperationRecord(operation: operation).updatedValues + [operation.id]))
        guard db.changesCount > 0 else { throw SyncError.operationNotFound(operation.id) }
    }

    /// Removes the operation; its error and a decision held with it go too (`ON DELETE CASCADE`).
    func remove(_ db: Database, id: Int64) throws {
        try OperationRecord.deleteOne(db, key: id)
    }

    /// Removes every operation of `table` (nil: of every table) with their errors.
    func removeAll(_ db: Database, table: String? = nil) throws {
        let queued = operations(of: table)
        try OperationErrorRecord.filter(queued.select(Columns.id).contains(OperationErrorRecord.Columns.operationId))
            .deleteAll(db)
        try queued.deleteAll(db)
    }

    /// Saves the operation's last error (replacing an older one).
    func saveError(_ db: Database, _ error: OperationError) throws {
        try OperationErrorRecord(error: error).insert(db, onConflict: .replace)
    }

    /// Forgets the operation's last error.
    func clearError(_ db: Database, operationId: Int64) throws {
        try OperationErrorRecord.delete(db, where: OperationErrorRecord.Columns.operationId, is: operationId)
    }

    /// Operations left in flight by a process that ended mid-push: their outcome is unknown, so
    /// they are attempted (the next push recognises an attempt whose answer was lost).
    func recoverInterrupted(_ db: Database) throws {
        try OperationRecord.filter(Columns.state == OperationState.inFlight.rawValue)
            .updateAll(db, Columns.state.set(to: OperationState.attempted.rawValue))
    }
}
