import Foundation
import GRDB
import SyncProtocol

/// How a conflict is read and settled in the store, in one transaction each: Use Server, a decision
/// held with its operation until the service answers, a per-field pick's result, and each table's
/// conflict policy. ``Conflicts`` is what a person decides with; ``Pusher`` settles what a push
/// meets through this.
struct ConflictSettlement: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    /// The conflict policy of tables that have none saved.
    let defaultPolicy: ConflictPolicy

    /// One conflicted operation, nil if it is not (or no longer) in conflict.
    func conflict(_ operationId: Int64) throws(SyncError) -> SyncConflict? {
        try store.read { [queue] db in
            guard let operation = try queue.operation(db, id: operationId), operation.state == .conflict else {
                return nil
            }
            return try conflict(db, operation)
        }
    }

    func conflict(_ db: Database, _ operation: TableOperation) throws -> SyncConflict? {
        guard let error = try queue.error(db, operationId: operation.id) else { return nil }
        return try conflict(db, operation, error)
    }

    /// The conflict of `operation` as `error` records it, with the local row read in the caller's transaction.
    func conflict(
        _ db: Database, _ operation: TableOperation, _ error: OperationError
    ) throws
        -> SyncConflict?
    {
        guard let table = store.tables[operation.table] else { return nil }
        let client = operation.kind == .delete ? nil : try store.readItem(db, table: table, id: operation.itemId)
        return SyncConflict(operation: operation, error: error, clientItem: client)
    }

    /// Use Server: writes the server's item into the local table (or removes the local row when the
    /// server deleted it), drops the operation and journals the outcome, in one transaction.
    func useServer(
        _ operationId: Int64, decidedBy: JournalEntry.Decider = .person, decision: JournalEntry.Decision = .useServer,
        batch: String? = nil
    ) async throws(SyncError) {
        try await store.asyncWrite { [self] db in
            try self.useServer(db, operationId, decidedBy: decidedBy, decision: decision, batch: batch)
        }
    }

    /// ``useServer(_:decidedBy:decision:batch:)`` in the caller's transaction.
    func useServer(
        _ db: Database, _ operationId: Int64, decidedBy: JournalEntry.Decider, decision: JournalEntry.Decision,
        batch: String?
    ) throws {
        guard let operation = try queue.operation(db, id: operationId), operation.state == .conflict,
            let conflict = try conflict(db, operation)
        else {
            throw SyncError.notInConflict(operationId)
        }
        try useServer(db, conflict, decidedBy: decidedBy, decision: decision, batch: batch)
    }

    /// ``useServer(_:decidedBy:decision:batch:)`` of `conflict` (stored, or just met by a push).
    func useServer(
        _ db: Database, _ conflict: SyncConflict, decidedBy: JournalEntry.Decider, decision: JournalEntry.Decision,
        batch: String?
    ) throws {
        try queue.useServer(db, conflict.operation, serverItem: conflict.serverItem)
        _ = try queue.journal.record(
            db,
            JournalEntry(
                conflict, decision: decision, decidedBy: decidedBy, result: conflict.serverItem,
                versionAfter: conflict.serverItem?[SystemColumn.version]?.stringValue, batch: batch))
    }

    /// The three-way comparison of a conflict, over its table's columns.
    func merge(of conflict: SyncConflict) -> MergeOutcome {
        ThreeWayMerge.merge(
            kind: conflict.operation.kind, base: conflict.base, client: conflict.clientItem,
            server: conflict.serverItem, columns: columns(of: conflict.operation.table))
    }

    /// The field-by-field comparison of a conflict (user columns only).
    func fieldMerges(of conflict: SyncConflict) -> [FieldMerge] {
        ThreeWayMerge.fields(
            base: conflict.base, client: conflict.clientItem, server: conflict.serverItem,
            columns: columns(of: conflict.operation.table))
    }

    func columns(of table: String) -> [String] {
        store.tables[table]?.columnNames ?? []
    }

    /// Adopts the server's version (writing `values` into the row first) with the decision held for
    /// the journal, ready to be sent. The entry is stored by the transaction that applies the
    /// service's answer (never apart from it); a new conflict (the service moved again) stays in the
    /// queue for the next decision and journals nothing.
    func holdDecision(_ id: Int64, _ decision: PendingDecision) async throws(SyncError) {
        try await store.asyncWrite { db in try self.holdDecision(db, id, decision) }
    }

    /// ``holdDecision(_:_:)`` in the caller's transaction.
    func holdDecision(_ db: Database, _ id: Int64, _ decision: PendingDecision) throws {
        guard let operation = try queue.operation(db, id: id), operation.state == .conflict,
            let conflict = try conflict(db, operation)
        else { throw SyncError.notInConflict(id) }
        try holdDecision(db, conflict, decision)
    }

    /// ``holdDecision(_:_:)`` of `conflict`, read by the caller's transaction.
    func holdDecision(_ db: Database, _ conflict: SyncConflict, _ decision: PendingDecision) throws {
        let entry = JournalEntry(
            conflict, decision: decision.decision, decidedBy: decision.decidedBy, result: nil, versionAfter: nil,
            batch: decision.batch, overturns: decision.overturns)
        try queue.adoptServerVersion(db, conflict: conflict, values: decision.values, decision: entry)
    }

    /// The item a per-field pick would push, without pushing it. Fields without a pick show their
    /// merged value, or (when `requireAll` is false) the client's value for a collision.
    func pickPreview(
        _ operationId: Int64, picking picks: [String: ConflictSide], requireAll: Bool = false
    ) throws -> Item {
        guard let conflict = try conflict(operationId) else { throw SyncError.notInConflict(operationId) }
        guard let server = conflict.serverItem, conflict.clientItem != nil else {
            throw ConflictDecisionError.pickNeedsBothCopies(operationId)
        }
        let fields = fieldMerges(of: conflict)
        var choices = picks
        if !requireAll {
            for field in fields where field.change == .collision && choices[field.name] == nil {
                choices[field.name] = .client
            }
        }
        do {
            return try ThreeWayMerge.resolve(fields, server: server, picks: choices)
        } catch {
            throw ConflictDecisionError.pick(error)
        }
    }
}
