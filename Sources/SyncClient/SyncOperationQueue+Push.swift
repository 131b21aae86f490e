import Foundation
import GRDB
import SyncProtocol

/// The queue transitions of a push, each in one transaction with the row it changes. The
/// ``PushDriver`` calls them as it applies ``PushDecision``s.
extension SyncOperationQueue {
    /// At most this many distinct bodies of earlier attempts are kept per operation.
    static let rememberedBodies = 8

    /// Puts a pending or attempted operation in flight and fixes what is sent; nil when it should not
    /// be sent now (no longer queued, an earlier change of the item waits, or its row was purged).
    ///
    /// The body sent is remembered (with up to seven earlier distinct ones) so that a later attempt
    /// recognises an attempt whose answer was lost.
    func beginAttempt(_ id: Int64) throws(SyncError) -> PushAttempt? {
        try store.write { db in try beginAttempt(db, id: id) }
    }

    /// ``beginAttempt(_:)`` in the caller's transaction.
    private func beginAttempt(_ db: Database, id: Int64) throws -> PushAttempt? {
        guard let operation = try operation(db, id: id), operation.state.isSendable,
            try firstOperationId(db, table: operation.table, itemId: operation.itemId) == id
        else { return nil }
        let table = try store.description(of: operation.table)
        let before = try mark(db, id: id)
        var attempt = PushAttempt(
            operationId: id, table: operation.table, itemId: operation.itemId, kind: operation.kind,
            recreate: operation.recreate, before: before)
        var sentText: String?
        var earlierText: String?
        switch operation.kind {
        case .insert, .update:
            guard let row = try store.readItem(db, table: table, id: operation.itemId) else {
                // The row is gone without a delete (purged): nothing left to send.
                try remove(db, id: id)
                return nil
            }
            var body: Item = [:]
            for column in table.columns { body[column.name] = row[column.name] ?? .null }
            if operation.kind == .insert {
                body[SystemColumn.id] = .string(operation.itemId)
            } else {
                attempt.ifMatch = row[SystemColumn.version]?.stringValue
            }
            if let last = operation.item {
                attempt.earlierBodies = [last] + Self.bodies(in: before?.earlierBodies)
                let kept = attempt.earlierBodies.filter { $0 != body }.prefix(Self.rememberedBodies - 1)
                if !kept.isEmpty { earlierText = JSONValue.array(kept.map { .object($0) }).jsonText }
            }
            attempt.body = body
            sentText = ItemCoding.encode(body)
        case .delete:
            attempt.snapshot = operation.item
            attempt.ifMatch = operation.item?[SystemColumn.version]?.stringValue
        }
        try db.cachedStatement(
            sql: """
                UPDATE __operations SET state = ?, attempts = attempts + 1, lastAttemptAt = ?,
                    item = coalesce(?, item), earlierBodies = coalesce(?, earlierBodies)
                WHERE id = ?
                """
        ).execute(
            arguments: [OperationState.inFlight.rawValue, Timestamp.string(Date()), sentText, earlierText, id])
        return attempt
    }

    /// What ``beginAttempt(_:)`` changes in the operation's row, as it is now.
    private func mark(_ db: Database, id: Int64) throws -> OperationMark? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT state, lastAttemptAt, item, earlierBodies FROM __operations WHERE id = ?"),
            arguments: [id]
        ).map { row in
            OperationMark(
                state: OperationState(rawValue: row[0]) ?? .pending, lastAttemptAt: row[1], item: row[2],
                earlierBodies: row[3])
        }
    }

    /// Puts back attempts that began but were not sent (the push stopped first): each operation is
    /// as it was before, pending or attempted, with its earlier bodies.
    func release(_ attempts: [PushAttempt]) throws(SyncError) {
        guard !attempts.isEmpty else { return }
        try store.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE __operations SET state = ?, attempts = attempts - 1, lastAttemptAt = ?, item = ?,
                        earlierBodies = ?
                    WHERE id = ? AND state = ?
                    """)
            for attempt in attempts {
                guard let before = attempt.before else { continue }
                try statement.execute(
                    arguments: [
                        before.state.rawValue, before.lastAttemptAt, before.item, before.earlierBodies,
                        attempt.operationId, OperationState.inFlight.rawValue,
                    ])
            }
        }
    }

    /// The bodies of an `earlierBodies` column (sent before the last one, newest first).
    private static func bodies(in text: String?) -> [Item] {
        guard let text, case .array(let values)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        else { return [] }
        return values.compactMap(\.objectValue)
    }

    /// The service applied these operations: each one's item goes into its row and the operation
    /// leaves the queue. A decision held with an operation (Use Client, a merge, a pick, an overturn)
    /// is journaled in the same transaction, so an outcome and its entry are stored together or not
    /// at all. Then the attempts of the operations `next` begin (``beginAttempt(_:)``), still in that
    /// one transaction; they are returned in the order of `next`.
    ///
    /// When a newer local change of an item is queued (an edit made while its change was in flight),
    /// the row keeps the newer values and only adopts the service's version, which the newer change
    /// then sends as `If-Match`.
    func complete(
        _ applied: [(id: Int64, serverItem: Item?)], thenBegin next: [Int64] = []
    ) throws(SyncError)
        -> [PushAttempt?]
    {
        guard !applied.isEmpty || !next.isEmpty else { return [] }
        return try store.write { db in
            for (id, serverItem) in applied { try complete(db, id: id, serverItem: serverItem) }
            return try next.map { try beginAttempt(db, id: $0) }
        }
    }

    /// One operation of ``complete(_:thenBegin:)``, in the caller's transaction.
    private func complete(_ db: Database, id: Int64, serverItem: Item?) throws {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT tableName, itemId, kind FROM __operations WHERE id = ?"),
                arguments: [id])
        else { return }
        let (tableName, itemId): (String, String) = (row[0], row[1])
        var result: Item?
        if let serverItem, OperationKind(rawValue: row[2]) != .delete {
            let table = try store.description(of: tableName)
            let later = try operations(db, table: tableName, itemId: itemId, after: id)
            result = serverItem
            if later.isEmpty {
                result = try store.adoptServerItem(db, table: table, item: serverItem)
            } else {
                if var current = try store.readItem(db, table: table, id: itemId) {
                    Self.adoptSystemColumns(of: serverItem, into: &current)
                    try store.writeItem(db, table: table, item: current)
                }
                for var next in later {
                    next.base = serverItem
                    if next.kind == .delete, next.item != nil {
                        next.item?[SystemColumn.version] = serverItem[SystemColumn.version]
                    }
                    try update(db, next)
                }
            }
        }
        try journal.settle(db, operationId: id, result: result)
        try remove(db, id: id)
    }

    /// The service holds another version (`serverItem`), or none: the operation waits in conflict.
    func recordConflict(_ id: Int64, serverItem: Item?, status: Int, sent: Item?) throws(SyncError) {
        let message =
            serverItem == nil
            ? "The item was deleted on the server." : "The item was changed on the server (HTTP \(status))."
        try record(
            id, state: .conflict, kind: serverItem == nil ? .deletedOnServer : .conflict, status: status,
            message: message, serverItem: serverItem, sent: sent)
    }

    /// The service refused the operation: it waits, failed, with the service's message.
    func recordFailure(_ id: Int64, status: Int, message: String, sent: Item?) throws(SyncError) {
        try record(id, state: .failed, kind: .failed, status: status, message: message, serverItem: nil, sent: sent)
    }

    private func record(
        _ id: Int64, state: OperationState, kind: OperationErrorKind, status: Int, message: String,
        serverItem: Item?, sent: Item?
    ) throws(SyncError) {
        try store.write { db in
            guard var operation = try operation(db, id: id) else { return }
            var message = message
            if state == .conflict, operation.kind == .insert, status == 409 {
                // The id is taken (by an item we may not even see), which is not a change on the server.
                message = "An item with this id already exists on the service (HTTP 409)."
            }
            operation.state = state
            operation.lastStatus = status
            operation.message = message
            try update(db, operation)
            // A decision that met a new conflict or a refusal did not happen.
            try journal.release(db, operationId: id)
            try saveError(
                db,
                OperationError(
                    operationId: id, kind: kind, status: status, message: message, serverItem: serverItem,
                    clientItem: sent, recordedAt: Date()))
        }
    }

    /// The outcome is unknown (no answer, the push stopped or was cancelled) or the push stopped
    /// before sending them: the operations in flight are attempted, and the next push recognises each
    /// one the service applied.
    func markAttempted(_ ids: [Int64], message: String, status: Int?) throws(SyncError) {
        guard !ids.isEmpty else { return }
        try store.write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE __operations SET state = ?, lastStatus = ?, message = ? WHERE id = ? AND state = ?")
            for id in ids {
                try statement.execute(
                    arguments: [
                        OperationState.attempted.rawValue, status, message, id, OperationState.inFlight.rawValue,
                    ])
            }
        }
    }

    /// An earlier attempt reached the service (its answer was lost) and the values changed since: the
    /// operation becomes a change of `serverItem`'s version, pending again.
    func rebase(_ id: Int64, over serverItem: Item) throws(SyncError) {
        try store.write { db in
            guard var operation = try operation(db, id: id) else { return }
            switch operation.kind {
            case .insert, .update:
                let table = try store.description(of: operation.table)
                if var row = try store.readItem(db, table: table, id: operation.itemId) {
                    Self.adoptSystemColumns(of: serverItem, into: &row)
                    try store.writeItem(db, table: table, item: row)
                }
                operation.kind = .update
            case .delete:
                operation.item?[SystemColumn.version] = serverItem[SystemColumn.version]
            }
            operation.state = .pending
            operation.base = serverItem
            try update(db, operation)
        }
    }

    /// Copies the service's `version`, `createdAt` and `updatedAt` into a local row.
    static func adoptSystemColumns(of serverItem: Item, into row: inout Item) {
        for column in [SystemColumn.version, SystemColumn.createdAt, SystemColumn.updatedAt] {
            if let value = serverItem[column] { row[column] = value }
        }
    }
}
