import Foundation
import GRDB
import HTTPTypes
import Storage
import SyncProtocol

/// The queue transitions of a push, each in one transaction with the row it changes. The
/// ``PushDriver`` calls them as it applies ``PushDecision``s.
extension SyncOperationQueue {
    /// At most this many distinct bodies of earlier attempts are kept per operation.
    static let rememberedBodies = 8

    /// Puts each pending or attempted operation of `ids` in flight and fixes what is sent, in the
    /// caller's transaction; the attempts in the order of `ids`, nil where one should not be sent now
    /// (no longer queued, held, an earlier change of the item waits, or its row was purged). The operations
    /// are read in one statement, and their rows in one per table.
    ///
    /// The body sent is remembered (with up to seven earlier distinct ones) so that a later attempt
    /// recognises an attempt whose answer was lost.
    func beginAttempts(_ db: Database, ids: [Int64]) throws -> [PushAttempt?] {
        guard !ids.isEmpty else { return [] }
        // Each operation, its queue row as it is now (``OperationMark``) and whether it is its item's first.
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT id, tableName, itemId, kind, state, recreate, item, lastAttemptAt, earlierBodies,
                        id = (SELECT min(id) FROM __operations AS first
                              WHERE first.tableName = operation.tableName AND first.itemId = operation.itemId)
                            AS isFirst,
                        base, heldAt IS NULL AS notHeld, changedColumns
                    FROM __operations AS operation WHERE id IN (\(sqlParameters(ids.count)))
                    """),
            arguments: StatementArguments(positional: ids))
        var sendable: [Int64: (attempt: PushAttempt, lastSent: Item?, base: Item?, changed: Set<String>?)] = [:]
        var changedItems: [String: [String]] = [:]
        for row in rows {
            // Held, or behind an earlier operation of the item (which a held one always is): not now.
            let state: OperationState = try OperationRecord.known(row, Columns.state)
            guard state.isSendable, row["isFirst"] as Bool, row["notHeld"] as Bool else { continue }
            let before = OperationMark(
                state: state, lastAttemptAt: row["lastAttemptAt"], item: row["item"],
                earlierBodies: row["earlierBodies"])
            let attempt = PushAttempt(
                operationId: row["id"], table: row["tableName"], itemId: row["itemId"],
                kind: try OperationRecord.known(row, Columns.kind), recreate: row["recreate"], before: before)
            sendable[attempt.operationId] = (
                attempt, ItemCoding.decode(before.item), ItemCoding.decode(row["base"]),
                OperationRecord.decodeColumns(row[Columns.changedColumns])
            )
            if attempt.kind != .delete { changedItems[attempt.table, default: []].append(attempt.itemId) }
        }
        var rowsByTable: [String: (table: TableDescription, items: [String: Item])] = [:]
        for (name, itemIds) in changedItems {
            let table = try store.description(of: name, in: db)
            rowsByTable[name] = (table, try store.readItems(db, table: table, ids: itemIds))
        }
        // Each begun operation's id, body sent and earlier bodies, for one UPDATE of them all.
        var begun: [DatabaseValue] = []
        let attempts = try ids.map { id -> PushAttempt? in
            guard let (queued, last, base, changed) = sendable[id] else { return nil }
            var attempt = queued
            var sentText: String?
            var earlierText: String?
            switch attempt.kind {
            case .insert, .update:
                guard let (table, items) = rowsByTable[attempt.table], let row = items[attempt.itemId] else {
                    // The row is gone without a delete (purged): nothing left to send.
                    try remove(db, id: id)
                    return nil
                }
                (sentText, earlierText) = Self.prepare(
                    &attempt, row: row, base: base, changed: changed, table: table, lastSent: last)
            case .delete:
                attempt.snapshot = last
                attempt.ifMatch = last?[SystemColumn.version]?.stringValue
            }
            begun += [id.databaseValue, sentText.databaseValue, earlierText.databaseValue]
            return attempt
        }
        guard !begun.isEmpty else { return attempts }
        try db.cachedStatement(
            sql: """
                UPDATE __operations SET state = ?, attempts = attempts + 1, lastAttemptAt = ?,
                    item = coalesce(begun.column2, item), earlierBodies = coalesce(begun.column3, earlierBodies)
                FROM (VALUES \(Array(repeating: "(?, ?, ?)", count: begun.count / 3).joined(separator: ", "))) AS begun
                WHERE __operations.id = begun.column1
                """
        ).execute(
            arguments: StatementArguments(positional: [OperationState.inFlight.rawValue, Timestamp.string(Date())])
                + StatementArguments(positional: begun))
        return attempts
    }

    /// Fixes the body of an insert or update from its row, and the bodies it remembers (`lastSent`
    /// and the earlier ones): returns the texts they are stored as (the earlier ones nil when none).
    ///
    /// An insert sends every user column; an update the columns the user changed (`changed`; for an
    /// operation of an older todosync, those that differ from `base`, the service's copy the change
    /// started from), or every column when there is no base or no change.
    private static func prepare(
        _ attempt: inout PushAttempt, row: Item, base: Item?, changed: Set<String>?, table: TableDescription,
        lastSent: Item?
    ) -> (sent: String?, earlier: String?) {
        var full: Item = [:]
        for column in table.columns { full[column.name] = row[column.name] ?? .null }
        var body = full
        if attempt.kind == .update, let base {
            let sent =
                changed.map { names in full.filter { names.contains($0.key) } }
                ?? full.filter { name, value in value != (base[name] ?? .null) }
            if !sent.isEmpty { body = sent }
        }
        if attempt.kind == .insert {
            full[SystemColumn.id] = .string(attempt.itemId)
            body[SystemColumn.id] = .string(attempt.itemId)
        } else {
            attempt.ifMatch = row[SystemColumn.version]?.stringValue
        }
        var earlierText: String?
        if let lastSent {
            attempt.earlierBodies = [lastSent] + bodies(in: attempt.before?.earlierBodies)
            let kept = attempt.earlierBodies.filter { $0 != body }.prefix(rememberedBodies - 1)
            if !kept.isEmpty { earlierText = JSONValue.array(kept.map { .object($0) }).jsonText }
        }
        attempt.body = body
        attempt.row = full
        return (ItemCoding.encode(body), earlierText)
    }

    /// Puts back attempts that began but were not sent (the push stopped first): each operation is
    /// as it was before, pending or attempted, with its earlier bodies.
    func release(_ attempts: [PushAttempt]) async throws(SyncError) {
        guard !attempts.isEmpty else { return }
        try await store.asyncWrite { db in
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

    /// The service applied these operations, in the caller's transaction: each one's item goes into
    /// its row and the operation leaves the queue. A decision held with an operation (Use Client, a
    /// merge, a pick, an overturn) is journaled in the same transaction, so an outcome and its entry
    /// are stored together or not at all. The operations are read in one statement and removed in one
    /// (their errors and held decisions go with them).
    ///
    /// When a newer local change of an item is queued (an edit made while its change was in flight),
    /// the row keeps the newer values and only adopts the service's version, which the newer change
    /// then sends as `If-Match`.
    func complete(_ db: Database, _ applied: [(id: Int64, serverItem: Item?)]) throws {
        guard !applied.isEmpty else { return }
        let ids = applied.map(\.id)
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT id, tableName, itemId, kind,
                        EXISTS (SELECT 1 FROM __operations AS later
                            WHERE later.tableName = operation.tableName AND later.itemId = operation.itemId
                                AND later.id > operation.id) AS hasLater
                    FROM __operations AS operation WHERE id IN (\(sqlParameters(ids.count)))
                    """),
            arguments: StatementArguments(positional: ids))
        let queued = Dictionary(uniqueKeysWithValues: rows.map { row in (row["id"] as Int64, row) })
        let held = try journal.held(db, among: ids)
        // The service's items, by table, of the items with nothing newer queued: adopted together.
        var adoptions: [String: [Item]] = [:]
        for (id, serverItem) in applied {
            guard let row = queued[id], let serverItem,
                try OperationRecord.known(row, Columns.kind) != OperationKind.delete
            else { continue }
            let (tableName, itemId, hasLater): (String, String, Bool) = (
                row["tableName"], row["itemId"], row["hasLater"]
            )
            if hasLater {
                try adoptVersion(
                    db, of: serverItem, table: store.description(of: tableName, in: db), itemId: itemId, after: id)
            } else {
                adoptions[tableName, default: []].append(serverItem)
            }
        }
        for (tableName, items) in adoptions {
            try store.adoptServerItems(db, table: store.description(of: tableName, in: db), items: items)
        }
        // The history tells the push before the decision it carried.
        for (id, serverItem) in applied {
            try history.recordOperation(
                db, .pushed, operationId: id, version: serverItem?[SystemColumn.version]?.stringValue)
        }
        // A decision held with an operation is journaled with the item as it now stands.
        for (id, serverItem) in applied where held.contains(id) {
            guard let row = queued[id] else { continue }
            var result: Item?
            if let serverItem, try OperationRecord.known(row, Columns.kind) != OperationKind.delete {
                result =
                    row["hasLater"]
                    ? serverItem
                    : try store.readItem(db, table: store.description(of: row["tableName"], in: db), id: row["itemId"])
            }
            try journal.settle(db, operationId: id, result: result)
        }
        try OperationRecord.deleteAll(db, keys: ids)
    }

    /// The service applied an operation of an item whose later change is queued (an edit made while
    /// the operation was in flight): the row keeps the newer values and only takes the service's
    /// version, which the later operations then send as `If-Match`.
    private func adoptVersion(
        _ db: Database, of serverItem: Item, table: TableDescription, itemId: String, after id: Int64
    ) throws {
        let later = try operations(db, table: table.name, itemId: itemId).filter { $0.id > id }
        if var current = try store.readItem(db, table: table, id: itemId) {
            // The newer change's own values over the service's item: the row's other columns may be
            // older than the service's, which the later operation must not send as changes.
            if let next = later.first { current = Self.rebased(current, of: next, onto: serverItem) ?? current }
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

    /// The service holds another version (`serverItem`), or none: the conflict met, in the caller's
    /// transaction (nil when the operation is no longer queued). Its event goes to the history and a
    /// decision held with the operation is released (it did not happen); the operation's state and
    /// error are only returned: ``keepWaiting(_:_:)`` stores them when the conflict waits for a person,
    /// and a policy that settles it stores only its outcome.
    func meetConflict(
        _ db: Database, _ id: Int64, serverItem: Item?, status: HTTPResponse.Status, sent: Item?
    ) throws -> RecordedConflict? {
        let message =
            serverItem == nil
            ? "The item was deleted on the server." : "The item was changed on the server (HTTP \(status.code))."
        return try outcome(
            db, id, state: .conflict, kind: serverItem == nil ? .deletedOnServer : .conflict, status: status,
            message: message, serverItem: serverItem, sent: sent)
    }

    /// The conflict or refusal waits for a person: its operation's state and error are stored.
    func keepWaiting(_ db: Database, _ met: RecordedConflict) throws {
        try update(db, met.operation)
        try saveError(db, met.error)
    }

    /// The service refused the operation: it waits, failed, with the service's message.
    func recordFailure(
        _ id: Int64, status: HTTPResponse.Status, message: String, sent: Item?
    ) async throws(SyncError) {
        try await store.asyncWrite { db in
            guard
                let refused = try outcome(
                    db, id, state: .failed, kind: .failed, status: status, message: message, serverItem: nil,
                    sent: sent)
            else { return }
            try keepWaiting(db, refused)
        }
    }

    /// The operation's new state and error (not stored), its history event and the release of a
    /// decision held with it (stored); nil when it is no longer queued.
    private func outcome(
        _ db: Database, _ id: Int64, state: OperationState, kind: OperationErrorKind, status: HTTPResponse.Status,
        message: String, serverItem: Item?, sent: Item?
    ) throws -> RecordedConflict? {
        guard var operation = try operation(db, id: id) else { return nil }
        var message = message
        if state == .conflict, operation.kind == .insert, status == .conflict {
            // The id is taken (by an item we may not even see), which is not a change on the server.
            message = "An item with this id already exists on the service (HTTP 409)."
        }
        operation.state = state
        operation.lastStatus = status.code
        operation.message = message
        // A decision that met a new conflict or a refusal did not happen.
        try journal.release(db, operationId: id)
        let error = OperationError(
            operationId: id, kind: kind, status: status.code, message: message, serverItem: serverItem,
            clientItem: sent, recordedAt: Date())
        try history.recordOperation(
            db, state == .conflict ? .conflict : .pushRefused, operationId: id, status: status.code,
            version: serverItem?[SystemColumn.version]?.stringValue, detail: message)
        return RecordedConflict(operation: operation, error: error)
    }

    /// The outcome is unknown (no answer, the push stopped or was cancelled) or the push stopped
    /// before sending them: the operations in flight are attempted, and the next push recognises each
    /// one the service applied.
    func markAttempted(_ ids: [Int64], message: String, status: HTTPResponse.Status?) async throws(SyncError) {
        guard !ids.isEmpty else { return }
        let code = status?.code
        try await store.asyncWrite { db in
            for id in ids {
                let changed = try OperationRecord.filter(key: id).filter(
                    Columns.state == OperationState.inFlight.rawValue
                )
                .updateAll(
                    db, Columns.state.set(to: OperationState.attempted.rawValue), Columns.lastStatus.set(to: code),
                    Columns.message.set(to: message))
                if changed > 0 {
                    try history.recordOperation(db, .pushUnanswered, operationId: id, status: code, detail: message)
                }
            }
        }
    }

    /// An earlier attempt reached the service (its answer was lost) and the values changed since: the
    /// operation becomes a change of `serverItem`'s version and begins again at once, in one
    /// transaction; nil when it is no longer to be sent.
    func rebaseAndBegin(_ id: Int64, over serverItem: Item) async throws(SyncError) -> PushAttempt? {
        try await store.asyncWrite { db in
            try rebase(db, id, over: serverItem)
            return try beginAttempts(db, ids: [id])[0]
        }
    }

    /// The service's item with the user's changes of `operation` taken from `row`: its changed
    /// columns (for an operation of an older todosync, those whose value differs from its base). The
    /// local row's other columns are only what the last pull brought, and others may have changed
    /// them on the service since, so they take the service's values: sent as changes over the
    /// service's version, the stale ones would overwrite those edits. Nil when the whole row is the
    /// user's (an insert).
    static func rebased(_ row: Item, of operation: TableOperation, onto serverItem: Item) -> Item? {
        var rebased = serverItem
        if let changed = operation.changedColumns {
            for name in changed { rebased[name] = row[name] ?? .null }
        } else if let base = operation.base {
            for (name, value) in row where !SystemColumn.all.contains(name) && value != (base[name] ?? .null) {
                rebased[name] = value
            }
        } else {
            return nil
        }
        return rebased
    }

    private func rebase(_ db: Database, _ id: Int64, over serverItem: Item) throws {
        guard var operation = try operation(db, id: id) else { return }
        switch operation.kind {
        case .insert, .update:
            let table = try store.description(of: operation.table)
            if var row = try store.readItem(db, table: table, id: operation.itemId) {
                row = Self.rebased(row, of: operation, onto: serverItem) ?? row
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

    /// Copies the service's `version`, `createdAt` and `updatedAt` into a local row.
    static func adoptSystemColumns(of serverItem: Item, into row: inout Item) {
        for column in [SystemColumn.version, SystemColumn.createdAt, SystemColumn.updatedAt] {
            if let value = serverItem[column] { row[column] = value }
        }
    }
}

/// An operation the service did not apply (a conflict or a refusal) with its new state and its error,
/// as met in the caller's transaction: stored by ``SyncOperationQueue/keepWaiting(_:_:)``, or settled
/// by a policy (which stores only its outcome).
struct RecordedConflict: Sendable {
    var operation: TableOperation
    var error: OperationError
}
