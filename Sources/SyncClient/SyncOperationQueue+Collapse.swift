import Foundation
import GRDB
import SyncProtocol

/// The collapse rules: a local change merges with the item's queued (not in-flight) operation.
extension SyncOperationQueue {
    /// Records a change of `itemId`, merging it with a queued (not in-flight) operation of the same item.
    ///
    /// - Parameter before: the row before the change, nil when there was none.
    /// - Returns: the id of the operation that carries the change.
    @discardableResult
    func enqueue(_ db: Database, kind: OperationKind, table: String, itemId: String, before: Item?) throws -> Int64 {
        let existing = try operations(db, table: table, itemId: itemId)
        guard let last = existing.last, last.state != .inFlight else {
            // Nothing queued, or the queued change is on the wire: a new operation, pushed after it.
            let base = before?[SystemColumn.version]?.stringValue != nil ? before : nil
            return try insert(
                db,
                TableOperation(
                    id: 0, table: table, itemId: itemId, kind: kind, state: .pending,
                    item: kind == .delete ? before : nil, base: base, attempts: 0, queuedAt: Date(),
                    lastAttemptAt: nil, lastStatus: nil, message: nil))
        }
        // A decision waiting for the service no longer describes the operation once an edit joins it.
        try journal.release(db, operationId: last.id)
        var operation = last
        switch (last.kind, kind) {
        case (.insert, .update), (.update, .update):
            // One operation carrying the newest values (they are read from the row at push time).
            if operation.state == .failed { try reopen(db, &operation) }
            try update(db, operation)
        case (.insert, .delete):
            // The server may already have an insert whose outcome is unknown: then delete it there too.
            if last.state == .attempted {
                operation.kind = .delete
                operation.item = before
                operation.recreate = false
                try reopen(db, &operation)
                try update(db, operation)
            } else {
                try remove(db, id: last.id)
            }
        case (.update, .delete):
            operation.kind = .delete
            operation.item = before
            try reopen(db, &operation)
            try update(db, operation)
        case (.delete, .insert):
            // Re-created locally: the server still has the item, so this is an update of it.
            operation.kind = .update
            operation.item = nil
            try reopen(db, &operation)
            try update(db, operation)
        default:
            throw SyncError.changeNotAllowed(table: table, id: itemId, queued: last.kind, new: kind)
        }
        return last.id
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
