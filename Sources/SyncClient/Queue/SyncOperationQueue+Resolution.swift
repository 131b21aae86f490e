import Foundation
import GRDB
import SyncProtocol

/// The user's choices for a conflicted, refused or unwanted operation. Use Client is
/// ``adoptServerVersion(_:conflict:values:decision:)`` followed by the ``PushDriver`` sending the operation.
extension SyncOperationQueue {
    /// Turns a conflicted operation into one that overwrites the service's current version: pending
    /// again, with the service's version. An insert that met an existing id becomes an update; an
    /// update of an item the service deleted becomes an insert that re-creates it; a delete of an
    /// item the service deleted has nothing left to do and leaves the queue. With `values`, the row's
    /// user columns take them first (a merge or a per-field pick). `decision` is held with the
    /// operation and journaled when the service applies it (see ``ConflictJournal``). Runs in the
    /// caller's transaction, which read `conflict` (its operation, recorded error and local row).
    func adoptServerVersion(
        _ db: Database, conflict: SyncConflict, values: Item? = nil, decision: JournalEntry? = nil
    ) throws {
        var operation = conflict.operation
        let id = operation.id, error = conflict.error
        guard operation.state == .conflict else { throw SyncError.notInConflict(id) }
        let table = try store.description(of: operation.table)
        if let server = error.serverItem, error.kind == .conflict || error.kind == .restoredOlder {
            switch operation.kind {
            case .insert, .update:
                guard var row = conflict.clientItem else {
                    throw SyncError.itemNotFound(table: operation.table, id: operation.itemId)
                }
                // Every picked field, also of a column only the service's copy has (the write adds it).
                let picked = (values ?? [:]).filter { !SystemColumn.all.contains($0.key) }
                for (name, value) in picked { row[name] = value }
                Self.adoptSystemColumns(of: server, into: &row)
                try store.writeItem(db, table: table, item: row)
                // An insert that met an existing id sends its whole row over it; an update, what the
                // user changed and what the decision picked.
                operation.changedColumns =
                    operation.kind == .insert
                    ? nil : operation.changedColumns?.union(picked.filter { $0.value != server[$0.key] ?? .null }.keys)
                operation.kind = .update
            case .delete:
                operation.item = (operation.item ?? [:]).merging(
                    [SystemColumn.version: server[SystemColumn.version] ?? .null]) { $1 }
            }
            operation.base = server
        } else {
            if operation.kind == .delete {
                try remove(db, id: id)
                return
            }
            operation.kind = .insert
            operation.recreate = true
            operation.base = nil
        }
        operation.state = .pending
        operation.message = nil
        try update(db, operation)
        try clearError(db, operationId: id)
        if let decision { try journal.hold(db, operationId: id, decision) }
    }

    /// Marks a queued insert as re-creating an item the service deleted: an id the service still
    /// holds as deleted is then undeleted and updated, not a conflict (see ``PushDecision/recreate``).
    func markRecreate(_ db: Database, id: Int64) throws {
        var operation = try existingOperation(db, id: id)
        operation.recreate = true
        try update(db, operation)
    }

    /// Use Server, inside the caller's transaction (which journals the outcome with it): the
    /// service's item goes into the local table (or the local row goes, when the service deleted the
    /// item) and the operation leaves the queue.
    func useServer(_ db: Database, _ operation: TableOperation, serverItem: Item?) throws {
        guard operation.state == .conflict else { throw SyncError.notInConflict(operation.id) }
        let table = try store.description(of: operation.table)
        if let serverItem {
            try store.writeItem(db, table: table, item: serverItem)
        } else {
            try store.deleteItem(db, table: operation.table, id: operation.itemId)
        }
        try remove(db, id: operation.id)
    }

    /// Cancel: the local change stays as it is; the operation is pending again (a conflict comes
    /// back on the next push) and its error is forgotten.
    func cancel(_ id: Int64) async throws(SyncError) {
        try await store.asyncWrite { [self] db in
            var operation = try existingOperation(db, id: id)
            guard operation.state == .conflict || operation.state == .failed else {
                throw SyncError.notInConflict(id)
            }
            operation.state = .pending
            operation.message = nil
            try update(db, operation)
            try clearError(db, operationId: id)
            try history.recordOperation(db, .cancelled, operationId: id)
        }
    }

    /// Drops one operation, losing that change: the row goes back to its base (the last server copy)
    /// when there is one; a discarded insert removes the row.
    func discard(_ id: Int64) async throws(SyncError) {
        try await store.asyncWrite { [self, store] db in
            let operation = try existingOperation(db, id: id)
            guard operation.state != .inFlight else { throw SyncError.operationInFlight(id) }
            let table = try store.description(of: operation.table)
            if try operations(db, table: operation.table, itemId: operation.itemId).count == 1 {
                switch operation.kind {
                case .insert:
                    try store.deleteItem(db, table: operation.table, id: operation.itemId)
                case .update:
                    if let base = operation.base { try store.writeItem(db, table: table, item: base) }
                case .delete:
                    if let restored = operation.base ?? operation.item {
                        try store.writeItem(db, table: table, item: restored)
                    }
                }
            }
            try history.recordOperation(db, .discarded, operationId: id)
            try remove(db, id: id)
        }
    }
}
