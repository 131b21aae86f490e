import Foundation
import GRDB
import SyncProtocol

/// A choice for a conflicted operation.
public enum ConflictResolution: String, Sendable, Codable, CaseIterable {
    /// Keep the local values over the server's version, and push the operation now.
    case useClient = "use-client"
    /// Take the server's version (or its delete) and drop the local change.
    case useServer = "use-server"
    /// Change nothing: the operation stays pending and will conflict again on the next push.
    case cancel
}

extension SyncContext {
    /// Every conflicted operation in push order, with base, client and server values.
    public nonisolated func conflicts() throws(SyncError) -> [SyncConflict] {
        try read { db in
            let operations = try Row.fetchAll(
                db, sql: "SELECT \(LocalStore.operationColumns) FROM __operations WHERE state = 'conflict' ORDER BY id"
            ).map(LocalStore.operation)
            return try operations.compactMap { operation in try conflict(db, operation) }
        }
    }

    /// One conflicted operation, nil if it is not (or no longer) in conflict.
    public nonisolated func conflict(_ operationId: Int64) throws(SyncError) -> SyncConflict? {
        try read { [store] db in
            guard let operation = try store.operation(db, id: operationId), operation.state == .conflict else {
                return nil
            }
            return try conflict(db, operation)
        }
    }

    private nonisolated func conflict(_ db: Database, _ operation: TableOperation) throws -> SyncConflict? {
        guard let error = try store.error(db, operationId: operation.id),
            let table = store.tables[operation.table]
        else { return nil }
        let client = operation.kind == .delete ? nil : try store.readItem(db, table: table, id: operation.itemId)
        return SyncConflict(operation: operation, error: error, clientItem: client)
    }

    /// Applies a choice to a conflicted operation; Use Client pushes it at once and says how it went
    /// (`.conflict` again when the server changed meanwhile).
    @discardableResult
    public func resolve(_ operationId: Int64, with resolution: ConflictResolution) async throws -> OperationOutcome? {
        switch resolution {
        case .useClient: return try await useClient(operationId)
        case .useServer:
            try useServer(operationId)
            return nil
        case .cancel:
            try cancel(operationId)
            return nil
        }
    }

    /// Use Client: keeps the local values, adopts the server's version and pushes this operation now.
    /// An insert that hit an existing id becomes an update; an update of an item the server deleted
    /// re-creates it. If the server changed again meanwhile, the result is a new conflict.
    public func useClient(_ operationId: Int64) async throws -> OperationOutcome {
        try await exclusive("use-client-\(operationId)") {
            try await self.runUseClient(operationId)
        }
    }

    private func runUseClient(_ operationId: Int64) async throws -> OperationOutcome {
        try adoptServerVersion(operationId)
        let transport = try readyTransport(.push, table: nil)
        let outcome: OperationOutcome
        do {
            outcome = try await send(operation: operationId, transport: transport, policy: .manual)
        } catch {
            let reason = (error as? SyncError).flatMap { if case .stopped(let reason) = $0 { reason } else { nil } }
            recordLastSync(
                SyncSummary(
                    kind: .push, table: nil, finishedAt: Date(), pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                    stopReason: reason, error: reason == nil ? "\(error)" : nil))
            throw error
        }
        recordLastSync(
            SyncSummary(
                kind: .push, table: nil, finishedAt: Date(), pushed: outcome == .pushed ? 1 : 0,
                conflicts: outcome == .conflict ? 1 : 0, failed: outcome == .failed ? 1 : 0, pulled: 0,
                stopReason: nil, error: nil))
        return outcome
    }

    /// Turns a conflicted operation into one that overwrites the server's current version.
    func adoptServerVersion(_ operationId: Int64) throws(SyncError) {
        try write { [store] db in
            var operation = try store.existingOperation(db, id: operationId)
            guard operation.state == .conflict, let error = try store.error(db, operationId: operationId) else {
                throw SyncError.notInConflict(operationId)
            }
            let table = try store.description(of: operation.table)
            if let server = error.serverItem, error.kind == .conflict {
                switch operation.kind {
                case .insert, .update:
                    guard var row = try store.readItem(db, table: table, id: operation.itemId) else {
                        throw SyncError.itemNotFound(table: operation.table, id: operation.itemId)
                    }
                    Self.adoptSystemColumns(of: server, into: &row)
                    try store.writeItem(db, table: table, item: row)
                    operation.kind = .update
                case .delete:
                    operation.item = (operation.item ?? [:]).merging(
                        [SystemColumn.version: server[SystemColumn.version] ?? .null]) { $1 }
                }
                operation.base = server
            } else {
                // Deleted on the server: re-create it (a delete has nothing left to do).
                if operation.kind == .delete {
                    try store.deleteOperation(db, id: operationId)
                    return
                }
                operation.kind = .insert
                operation.recreate = true
                operation.base = nil
            }
            operation.state = .pending
            operation.message = nil
            try store.updateOperation(db, operation)
            try store.clearError(db, operationId: operationId)
        }
    }

    /// Use Server: writes the server's item into the local table (or removes the local row when the
    /// server deleted it) and drops the operation.
    public nonisolated func useServer(_ operationId: Int64) throws(SyncError) {
        try write { [store] db in
            let operation = try store.existingOperation(db, id: operationId)
            guard operation.state == .conflict, let error = try store.error(db, operationId: operationId) else {
                throw SyncError.notInConflict(operationId)
            }
            let table = try store.description(of: operation.table)
            if let server = error.serverItem {
                try store.writeItem(db, table: table, item: server)
            } else {
                try store.deleteItem(db, table: operation.table, id: operation.itemId)
            }
            try store.deleteOperation(db, id: operationId)
        }
    }

    /// Cancel: leaves the local change as it is; the operation is pending again and its conflict is
    /// cleared until the next push.
    public nonisolated func cancel(_ operationId: Int64) throws(SyncError) {
        try write { [store] db in
            var operation = try store.existingOperation(db, id: operationId)
            guard operation.state == .conflict || operation.state == .failed else {
                throw SyncError.notInConflict(operationId)
            }
            operation.state = .pending
            operation.message = nil
            try store.updateOperation(db, operation)
            try store.clearError(db, operationId: operationId)
        }
    }

    /// Drops one queued operation, losing that change: the row goes back to its base (the last
    /// server copy) when there is one; a discarded insert removes the row.
    public nonisolated func discard(_ operationId: Int64) throws(SyncError) {
        try write { [store] db in
            let operation = try store.existingOperation(db, id: operationId)
            guard operation.state != .inFlight else { throw SyncError.operationInFlight(operationId) }
            let table = try store.description(of: operation.table)
            let others = try store.operations(db, table: operation.table, itemId: operation.itemId)
            if others.count == 1 {
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
            try store.deleteOperation(db, id: operationId)
        }
    }

    /// The queue in push order (optionally one table's).
    public nonisolated func operations(table: String? = nil) throws(SyncError) -> [TableOperation] {
        try read { [store] db in try store.allOperations(db, table: table) }
    }

    /// One queued operation.
    public nonisolated func operation(_ operationId: Int64) throws(SyncError) -> TableOperation? {
        try read { [store] db in try store.operation(db, id: operationId) }
    }

    /// The queued operations of one item (at most one, plus one in flight).
    public nonisolated func operations(table: String, itemId: String) throws(SyncError) -> [TableOperation] {
        try read { [store] db in try store.operations(db, table: table, itemId: itemId) }
    }

    /// The newest queued operation of each of these items that has one, by item id.
    public nonisolated func latestOperations(
        table: String, itemIds: [String]
    ) throws(SyncError)
        -> [String: OperationSummary]
    {
        let summaries = try read { [store] db in
            // In chunks, under SQLite's limit on bound parameters.
            try stride(from: 0, to: itemIds.count, by: 500).flatMap { start in
                let chunk = Array(itemIds[start..<min(start + 500, itemIds.count)])
                return try store.operationSummaries(db, table: table, itemIds: chunk)
            }
        }
        return Dictionary(summaries.map { ($0.itemId, $0) }) { older, newer in older.id < newer.id ? newer : older }
    }

    /// The last error of an operation (conflict or refusal), with the server's and the client's items.
    public nonisolated func error(ofOperation operationId: Int64) throws(SyncError) -> OperationError? {
        try read { [store] db in try store.error(db, operationId: operationId) }
    }
}
