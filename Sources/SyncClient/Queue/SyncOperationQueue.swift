import Foundation
import GRDB
import Storage
import SyncProtocol

/// The persistent queue of local changes: the only code that reads or writes `__operations` and
/// `__errors`.
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

    /// The queue's steps after the first schema (which ``LocalStore`` creates).
    static let migrations: [StoreMigration] = [
        StoreMigration("v2-earlier-bodies") { db in
            // Bodies of earlier attempts used to hide under an `__earlier` key inside `item`.
            try db.execute(sql: "ALTER TABLE __operations ADD COLUMN earlierBodies TEXT")
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, item FROM __operations WHERE item LIKE ?", arguments: ["%\"__earlier\"%"])
            for row in rows {
                guard var item = ItemCoding.decode(row[1]),
                    case .array(let earlier)? = item.removeValue(forKey: legacyEarlierKey)
                else { continue }
                try db.execute(
                    sql: "UPDATE __operations SET item = ?, earlierBodies = ? WHERE id = ?",
                    arguments: [ItemCoding.encode(item), JSONValue.array(earlier).jsonText, row[0] as Int64])
            }
        }
    ]

    /// Adds the hold of an operation (see ``TableOperation/hold``): when and why a person held it.
    static let holdMigration = StoreMigration("v9-held-operations") { db in
        try db.execute(sql: "ALTER TABLE __operations ADD COLUMN heldAt TEXT")
        try db.execute(sql: "ALTER TABLE __operations ADD COLUMN heldReason TEXT")
    }

    /// Adds the columns each queued change sets (see ``TableOperation/changedColumns``).
    static let changedColumnsMigration = StoreMigration("v10-changed-columns") { db in
        try db.execute(sql: "ALTER TABLE __operations ADD COLUMN changedColumns TEXT")
    }

    /// `changedColumns` as stored: the names as a JSON array, sorted (nil: none kept).
    static func encode(_ columns: Set<String>?) -> String? {
        columns.map { JSONValue.array($0.sorted().map(JSONValue.string)).jsonText }
    }

    static func decodeColumns(_ text: String?) -> Set<String>? {
        guard let text, case .array(let names)? = ItemCoding.value(text) else { return nil }
        return Set(names.compactMap(\.stringValue))
    }

    /// Where stores written before `v2-earlier-bodies` kept the bodies of earlier attempts.
    static let legacyEarlierKey = "__earlier"

    // MARK: Reading

    func operation(_ db: Database, id: Int64) throws -> TableOperation? {
        try fetchOperations(db, "SELECT \(OperationRecord.selection) FROM __operations WHERE id = ?", [id]).first
    }

    /// The operation, or ``SyncError/operationNotFound(_:)``.
    func existingOperation(_ db: Database, id: Int64) throws -> TableOperation {
        guard let operation = try operation(db, id: id) else { throw SyncError.operationNotFound(id) }
        return operation
    }

    /// The item's operations in push order (at most one queued, plus one in flight or settled earlier).
    func operations(_ db: Database, table: String, itemId: String) throws -> [TableOperation] {
        try fetchOperations(
            db, "SELECT \(OperationRecord.selection) FROM __operations WHERE tableName = ? AND itemId = ? ORDER BY id",
            [table, itemId])
    }

    /// Every operation in push order, optionally one table's.
    func all(_ db: Database, table: String? = nil) throws -> [TableOperation] {
        if let table {
            return try fetchOperations(
                db, "SELECT \(OperationRecord.selection) FROM __operations WHERE tableName = ? ORDER BY id", [table])
        }
        return try fetchOperations(db, "SELECT \(OperationRecord.selection) FROM __operations ORDER BY id")
    }

    /// The operations in `state`, in push order.
    func all(_ db: Database, in state: OperationState) throws -> [TableOperation] {
        try fetchOperations(
            db, "SELECT \(OperationRecord.selection) FROM __operations WHERE state = ? ORDER BY id", [state.rawValue])
    }

    /// Summaries of the operations of several items, in push order.
    func summaries(_ db: Database, table: String, itemIds: [String]) throws -> [OperationSummary] {
        guard !itemIds.isEmpty else { return [] }
        return try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT id, itemId, kind, state, heldAt IS NOT NULL AS held FROM __operations
                    WHERE tableName = ? AND itemId IN (\(sqlParameters(itemIds.count))) ORDER BY id
                    """),
            arguments: StatementArguments([table] + itemIds)
        ).map { row in
            OperationSummary(
                id: row["id"], itemId: row["itemId"], kind: try OperationRecord.known(row, "kind"),
                state: try OperationRecord.known(row, "state"), isHeld: row["held"])
        }
    }

    /// How many operations (of `table`, or of every table) are in each state.
    func counts(_ db: Database, table: String? = nil) throws -> [OperationState: Int] {
        let statement =
            try table == nil
            ? db.cachedStatement(sql: "SELECT state, COUNT(*) AS count FROM __operations GROUP BY state")
            : db.cachedStatement(
                sql: "SELECT state, COUNT(*) AS count FROM __operations WHERE tableName = ? GROUP BY state")
        var counts: [OperationState: Int] = [:]
        for row in try Row.fetchAll(statement, arguments: StatementArguments(table.map { [$0] } ?? [])) {
            counts[try OperationRecord.known(row, "state"), default: 0] += row["count"] as Int
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

    /// The operations a push sends, in push order, with the item each one changes (none held, none
    /// behind a held one).
    func sendable(_ db: Database) throws -> [(id: Int64, table: String, itemId: String)] {
        try Row.fetchAll(
            db,
            sql:
                "SELECT id, tableName, itemId FROM __operations WHERE \(Self.sendableSQL) ORDER BY id"
        ).map { ($0["id"], $0["tableName"], $0["itemId"]) }
    }

    /// The table of the first operation a push sends; nil when none waits.
    func firstSendableTable(_ db: Database) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(
                sql:
                    "SELECT tableName FROM __operations WHERE \(Self.sendableSQL) ORDER BY id LIMIT 1"
            ))
    }

    /// How many operations of `table` a push would send.
    func sendableCount(_ db: Database, table: String) throws -> Int {
        try Int.fetchOne(
            db,
            sql: "SELECT COUNT(*) FROM __operations WHERE tableName = ? AND \(Self.sendableSQL)",
            arguments: [table]) ?? 0
    }

    /// How many operations `table` has, whatever their state (nil: every table).
    func count(_ db: Database, table: String? = nil) throws -> Int {
        if let table {
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM __operations WHERE tableName = ?", arguments: [table])
                ?? 0
        }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM __operations") ?? 0
    }

    /// The ids of `table`'s items that have an operation (pull leaves their rows alone).
    func itemIds(_ db: Database, table: String) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT itemId FROM __operations WHERE tableName = ?"),
                arguments: [table]))
    }

    /// The last error of an operation.
    func error(_ db: Database, operationId: Int64) throws -> OperationError? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT operationId, kind, status, message, serverItem, clientItem, recordedAt
                    FROM __errors WHERE operationId = ?
                    """),
            arguments: [operationId]
        ).map { row in
            OperationError(
                operationId: row["operationId"], kind: try StoredValue.known(row, "kind", of: "__errors"),
                status: row["status"], message: row["message"], serverItem: ItemCoding.decode(row["serverItem"]),
                clientItem: ItemCoding.decode(row["clientItem"]),
                recordedAt: try StoredValue.time(row, "recordedAt", of: "__errors"))
        }
    }

    // MARK: Writing

    /// Adds an operation at the end of the queue; returns its id.
    @discardableResult
    func insert(_ db: Database, _ operation: TableOperation) throws -> Int64 {
        try db.cachedStatement(
            sql: """
                INSERT INTO __operations
                    (tableName, itemId, kind, state, item, base, attempts, queuedAt, lastAttemptAt, lastStatus, message, recreate,
                    changedColumns)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                operation.table, operation.itemId, operation.kind.rawValue, operation.state.rawValue,
                ItemCoding.encode(operation.item), ItemCoding.encode(operation.base), operation.attempts,
                Timestamp.string(operation.queuedAt), operation.lastAttemptAt.map(Timestamp.string),
                operation.lastStatus, operation.message, operation.recreate, Self.encode(operation.changedColumns),
            ])
        return db.lastInsertedRowID
    }

    /// Saves every field of the operation.
    func update(_ db: Database, _ operation: TableOperation) throws {
        try db.cachedStatement(
            sql: """
                UPDATE __operations SET kind = ?, state = ?, item = ?, base = ?, attempts = ?, lastAttemptAt = ?,
                    lastStatus = ?, message = ?, recreate = ?, changedColumns = ?
                WHERE id = ?
                """
        ).execute(
            arguments: [
                operation.kind.rawValue, operation.state.rawValue, ItemCoding.encode(operation.item),
                ItemCoding.encode(operation.base), operation.attempts, operation.lastAttemptAt.map(Timestamp.string),
                operation.lastStatus, operation.message, operation.recreate, Self.encode(operation.changedColumns),
                operation.id,
            ])
    }

    /// Removes the operation; its error and a decision held with it go too (`ON DELETE CASCADE`).
    func remove(_ db: Database, id: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM __operations WHERE id = ?").execute(arguments: [id])
    }

    /// Removes every operation of `table` (nil: of every table) with their errors.
    func removeAll(_ db: Database, table: String? = nil) throws {
        if let table {
            try db.execute(
                sql: "DELETE FROM __errors WHERE operationId IN (SELECT id FROM __operations WHERE tableName = ?)",
                arguments: [table])
            try db.execute(sql: "DELETE FROM __operations WHERE tableName = ?", arguments: [table])
        } else {
            try db.execute(sql: "DELETE FROM __errors")
            try db.execute(sql: "DELETE FROM __operations")
        }
    }

    /// Saves the operation's last error (replacing an older one).
    func saveError(_ db: Database, _ error: OperationError) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO __errors (operationId, kind, status, message, serverItem, clientItem, recordedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                error.operationId, error.kind.rawValue, error.status, error.message,
                ItemCoding.encode(error.serverItem), ItemCoding.encode(error.clientItem),
                Timestamp.string(error.recordedAt),
            ])
    }

    /// Forgets the operation's last error.
    func clearError(_ db: Database, operationId: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM __errors WHERE operationId = ?").execute(arguments: [operationId])
    }

    /// Operations left in flight by a process that ended mid-push: their outcome is unknown, so
    /// they are attempted (the next push recognises an attempt whose answer was lost).
    func recoverInterrupted(_ db: Database) throws {
        try db.execute(
            sql: "UPDATE __operations SET state = ? WHERE state = ?",
            arguments: [OperationState.attempted.rawValue, OperationState.inFlight.rawValue])
    }
}
