import Foundation
import GRDB
import SyncProtocol

/// The collapse rules: a local change merges with the item's queued (not in-flight) operation.
extension SyncOperationQueue {
    /// Records a change of `itemId`, merging it with a queued (not in-flight) operation of the same
    /// item, and notes it in the row's history.
    ///
    /// - Parameters:
    ///   - before: the row before the change, nil when there was none.
    ///   - after: the row after it, nil for a delete.
    ///   - note: how the history tells a change that is not a plain edit (an overturn).
    /// - Returns: the id of the operation that carries the change.
    @discardableResult
    func enqueue(
        _ db: Database, kind: OperationKind, table: String, itemId: String, before: Item?, after: Item?,
        note: String? = nil
    ) throws -> Int64 {
        // In the change's transaction: a store whose access was revoked takes no change from then on.
        if let revoked = try RevokedAccess.saved(store, db) { throw SyncError.readOnly(revoked) }
        let changes = Self.changes(from: before, to: after)
        let (id, joined) = try collapse(
            db, kind: kind, table: table, itemId: itemId, before: before,
            changing: Set(changes.map { Array($0.keys) } ?? []))
        let detail = [note, joined].compactMap { $0 }.joined(separator: "; ")
        try history.recordEdit(
            db, kind, table: table, itemId: itemId, operationId: id, values: changes,
            detail: detail.isEmpty ? nil : detail)
        return id ?? 0
    }

    /// Queues the change (which sets `columns`): its operation's id (nil when it cancelled the
    /// queued one out) and how it joined a queued operation (nil: a new one).
    private func collapse(
        _ db: Database, kind: OperationKind, table: String, itemId: String, before: Item?, changing columns: Set<String>
    ) throws -> (Int64?, String?) {
        let existing = try operations(db, table: table, itemId: itemId)
        guard let last = existing.last, last.state != .inFlight else {
            // Nothing queued, or the queued change is on the wire: a new operation, pushed after it.
            let base = before?[SystemColumn.version]?.stringValue != nil ? before : nil
            let id = try insert(
                db,
                TableOperation(
                    id: 0, table: table, itemId: itemId, kind: kind, state: .pending,
                    item: kind == .delete ? before : nil, base: base, attempts: 0, queuedAt: Date(),
                    lastAttemptAt: nil, lastStatus: nil, message: nil,
                    changedColumns: kind == .update ? columns : nil))
            return (
                id,
                existing.isEmpty
                    ? nil : "queued behind operation \(existing[existing.count - 1].id), which was being sent"
            )
        }
        // A decision waiting for the service no longer describes the operation once an edit joins it.
        try journal.release(db, operationId: last.id)
        var operation = last
        switch Collapse.decide(queued: last.kind, state: last.state, change: kind) {
        case .merge:
            if operation.state == .failed { try reopen(db, &operation) }
            operation.changedColumns = operation.changedColumns?.union(columns)
            try update(db, operation)
            return (last.id, "joined queued operation \(last.id)")
        case .drop:
            try remove(db, id: last.id)
            return (nil, "the queued insert never reached the service: both are gone")
        case .delete:
            operation.kind = .delete
            operation.item = before
            operation.recreate = false
            operation.changedColumns = nil
            try reopen(db, &operation)
            try update(db, operation)
            return (last.id, "queued operation \(last.id) became a delete")
        case .update:
            operation.kind = .update
            operation.item = nil
            // Re-created: every column is the user's.
            operation.changedColumns = nil
            try reopen(db, &operation)
            try update(db, operation)
            return (last.id, "re-created: queued delete \(last.id) became an update")
        case .refuse:
            throw SyncError.changeNotAllowed(table: table, id: itemId, queued: last.kind, new: kind)
        }
    }

    /// The user columns a change set: every one of a new row, the changed ones of an edit; nil for a delete.
    static func changes(from before: Item?, to after: Item?) -> Item? {
        guard let after else { return nil }
        var changed: Item = [:]
        for (name, value) in after where !SystemColumn.all.contains(name) && before?[name] != value {
            changed[name] = value
        }
        return changed
    }

    /// Makes the operation pending again and forgets its last error.
    private func reopen(_ db: Database, _ operation: inout TableOperation) throws {
        operation.state = operation.state == .attempted ? .attempted : .pending
        operation.message = nil
        try clearError(db, operationId: operation.id)
    }

    /// The queued (not in-flight) operation of an item, if any.
    func queued(_ db: Database, table: String, itemId: String) throws -> TableOperation? {
        guard let last = try operations(db, table: table, itemId: itemId).last, last.state != .inFlight
        else { return nil }
        return last
    }
}

/// What a new local change does to its item's queued (not in-flight) operation: the collapse rules,
/// as a pure function (``decide(queued:state:change:)``) that ``SyncOperationQueue/enqueue(_:kind:table:itemId:before:)``
/// applies.
enum Collapse: Sendable, Equatable {
    /// The queued operation carries the new values too (they are read from the row at push time).
    case merge
    /// The queued insert never reached the service: the insert and the delete both vanish.
    case drop
    /// The queued operation becomes a delete of the row as it was before the change.
    case delete
    /// Re-created locally after a queued delete: the service still has the item, so it is an update.
    case update
    /// Not a change that can follow the queued one (a second insert, an edit of a deleted item).
    case refuse

    /// The rule for `change` after a queued operation of `queued` kind in `state`.
    static func decide(queued: OperationKind, state: OperationState, change: OperationKind) -> Collapse {
        switch (queued, change) {
        case (.insert, .update), (.update, .update): .merge
        // The service may have an insert whose answer was lost: then it must be deleted there too.
        case (.insert, .delete): state == .attempted ? .delete : .drop
        case (.update, .delete): .delete
        case (.delete, .insert): .update
        default: .refuse
        }
    }
}
