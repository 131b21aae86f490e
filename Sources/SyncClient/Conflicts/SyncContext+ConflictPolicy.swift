import Foundation
import GRDB
import SyncProtocol

/// A decision that pushes local values, waiting for the service's answer before it is journaled.
struct PendingDecision: Sendable {
    var decision: JournalEntry.Decision
    var decidedBy: JournalEntry.Decider
    /// Values for the row's user columns before it is pushed (a merge or a pick); nil keeps the row.
    var values: Item? = nil
    var batch: String? = nil
    var overturns: String? = nil
}

extension SyncContext {
    // MARK: Policies per table

    /// The conflict policy of `table`: the one saved in the store, else ``defaultConflictPolicy``.
    nonisolated func conflictPolicy(for table: String) throws(SyncError) -> ConflictPolicy {
        try read { db in try conflictPolicy(db, for: table) }
    }

    /// ``conflictPolicy(for:)`` in the caller's transaction.
    nonisolated func conflictPolicy(_ db: Database, for table: String) throws -> ConflictPolicy {
        try store.config(db, Self.policyKey(table), as: ConflictPolicy.self) ?? defaultConflictPolicy
    }

    static func policyKey(_ table: String) -> String { "conflictPolicy|\(table)" }

    // MARK: Applying a policy during push

    /// Settles a conflict that push just recorded as its table's policy says, in the transaction that
    /// recorded it: leaves it for a person (ask, or a true collision under merge), takes the server's
    /// version, or adopts the server's version under the local or merged values, to be sent again by
    /// the same push run (then it returns nil). Every outcome is journaled (a sent one when the
    /// service applies it).
    nonisolated func settleByPolicy(_ db: Database, _ recorded: RecordedConflict) throws -> OperationOutcome? {
        guard let conflict = try conflict(db, recorded.operation, recorded.error) else { return .conflict }
        let operation = recorded.operation
        let policy = try conflictPolicy(db, for: operation.table)
        let decider: JournalEntry.Decider =
            switch policy {
            case .ask, .merge: .merge
            case .serverWins: .serverWins
            case .clientWins: .clientWins
            }
        switch policy.action(for: merge(of: conflict)) {
        case .ask:
            return .conflict
        case .useServer:
            try useServer(
                db, conflict, decidedBy: decider, decision: policy == .merge ? .merge : .useServer, batch: nil)
            return .resolvedByServer
        case .useClient:
            let decision: JournalEntry.Decision = policy == .merge ? .merge : .useClient
            try holdDecision(db, conflict, PendingDecision(decision: decision, decidedBy: decider))
            return nil
        case .pushMerged(let item):
            try holdDecision(db, conflict, PendingDecision(decision: .merge, decidedBy: decider, values: item))
            return nil
        }
    }

    /// The three-way comparison of a conflict, over its table's columns.
    nonisolated func merge(of conflict: SyncConflict) -> MergeOutcome {
        ThreeWayMerge.merge(
            kind: conflict.operation.kind, base: conflict.base, client: conflict.clientItem,
            server: conflict.serverItem, columns: columns(of: conflict.operation.table))
    }

    /// The field-by-field comparison of a conflict (user columns only).
    nonisolated func fieldMerges(of conflict: SyncConflict) -> [FieldMerge] {
        ThreeWayMerge.fields(
            base: conflict.base, client: conflict.clientItem, server: conflict.serverItem,
            columns: columns(of: conflict.operation.table))
    }

    nonisolated func columns(of table: String) -> [String] {
        store.tables[table]?.columnNames ?? []
    }

    /// Adopts the server's version (writing `values` into the row first) with the decision held for
    /// the journal, ready to be sent. The entry is stored by the transaction that applies the
    /// service's answer (never apart from it); a new conflict (the service moved again) stays in the
    /// queue for the next decision and journals nothing.
    nonisolated func holdDecision(_ id: Int64, _ decision: PendingDecision) async throws(SyncError) {
        try await write { db in try self.holdDecision(db, id, decision) }
    }

    /// ``holdDecision(_:_:)`` in the caller's transaction.
    nonisolated func holdDecision(_ db: Database, _ id: Int64, _ decision: PendingDecision) throws {
        guard let operation = try queue.operation(db, id: id), operation.state == .conflict,
            let conflict = try conflict(db, operation)
        else { throw SyncError.notInConflict(id) }
        try holdDecision(db, conflict, decision)
    }

    /// ``holdDecision(_:_:)`` of `conflict`, read by the caller's transaction.
    private nonisolated func holdDecision(_ db: Database, _ conflict: SyncConflict, _ decision: PendingDecision) throws
    {
        let entry = JournalEntry(
            conflict, decision: decision.decision, decidedBy: decision.decidedBy, result: nil, versionAfter: nil,
            batch: decision.batch, overturns: decision.overturns)
        try queue.adoptServerVersion(db, conflict: conflict, values: decision.values, decision: entry)
    }

    // MARK: Per-field pick

    /// The item a per-field pick would push, without pushing it. Fields without a pick show their
    /// merged value, or (when `requireAll` is false) the client's value for a collision.
    nonisolated func pickPreview(
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

extension JournalEntry {
    /// The entry for an outcome of `conflict` (its sequence is assigned when it is recorded).
    init(
        _ conflict: SyncConflict, decision: Decision, decidedBy: Decider, result: Item?, versionAfter: String?,
        batch: String? = nil, overturns: String? = nil
    ) {
        let client = conflict.operation.kind == .delete ? nil : conflict.clientItem
        self.init(
            id: UUID().uuidString.lowercased(), sequence: 0, table: conflict.operation.table,
            itemId: conflict.operation.itemId, operation: conflict.operation.kind, base: conflict.base,
            client: client, server: conflict.serverItem, result: result, decision: decision, decidedBy: decidedBy,
            versionBefore: conflict.serverItem?[SystemColumn.version]?.stringValue, versionAfter: versionAfter,
            recordedAt: Date(), batch: batch, overturns: overturns)
    }
}
