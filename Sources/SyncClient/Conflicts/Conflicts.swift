import Foundation
import SyncProtocol

/// A context's conflicts and how they are decided: the conflicts waiting for a person, Use Client,
/// Use Server, Cancel, a per-field pick, bulk decisions, and each table's conflict policy (see
/// ``SyncContext/conflicts``).
public struct Conflicts: Sendable {
    let settlement: ConflictSettlement
    /// Pushes Use Client and a per-field pick at once.
    let pusher: Pusher
    let jobs: JobSlot

    /// Every conflicted operation in push order, with base, client and server values.
    public func all() throws(SyncError) -> [SyncConflict] {
        try settlement.store.read { [settlement] db in
            try settlement.queue.all(db, in: .conflict).compactMap { operation in
                try settlement.conflict(db, operation)
            }
        }
    }

    /// The conflict of one operation; nil when it is not in conflict.
    public func conflict(_ operationId: Int64) throws(SyncError) -> SyncConflict? {
        try settlement.conflict(operationId)
    }

    /// Applies a choice to a conflicted operation; Use Client pushes it at once and says how it went
    /// (`.conflict` again when the server changed meanwhile).
    @discardableResult
    public func resolve(_ operationId: Int64, with resolution: ConflictResolution) async throws -> OperationOutcome? {
        switch resolution {
        case .useClient: return try await useClient(operationId)
        case .useServer:
            try await useServer(operationId)
            return nil
        case .cancel:
            try await settlement.queue.cancel(operationId)
            return nil
        }
    }

    /// Applies Use Client or Use Server to several conflicts as one batch (one id in the journal, so
    /// that ``DecisionJournal/undo(batch:)`` can overturn them together). Conflicts that were settled
    /// meanwhile are skipped.
    public func resolve(_ operationIds: [Int64], with resolution: ConflictResolution) async throws -> BulkDecision {
        guard resolution != .cancel else { throw ConflictDecisionError.bulkNeedsUseClientOrServer }
        let batch = UUID().uuidString.lowercased()
        var outcomes: [Int64: OperationOutcome] = [:]
        for id in operationIds {
            guard try conflict(id) != nil else { continue }
            switch resolution {
            case .useClient:
                outcomes[id] = try await useClient(id, batch: batch)
            case .useServer, .cancel:
                try await useServer(id, batch: batch)
                outcomes[id] = .resolvedByServer
            }
        }
        return BulkDecision(batch: batch, outcomes: outcomes)
    }

    /// A per-field pick: each colliding field takes the side picked (other fields merge as
    /// ``ThreeWayMerge`` says), and the result is pushed now with the server's version.
    ///
    /// - Throws: ``ConflictDecisionError`` when a colliding field has no pick, a pick names no field,
    ///   or one side deleted the item (then choose Use Client or Use Server).
    public func resolve(_ operationId: Int64, picking picks: [String: ConflictSide]) async throws -> OperationOutcome {
        let result = try settlement.pickPreview(operationId, picking: picks, requireAll: true)
        return try await runDecision(
            operationId, PendingDecision(decision: .pick, decidedBy: .person, values: result))
    }

    /// What a bulk decision would change: how many conflicts, and per conflict which fields take
    /// another value (on the service for Use Client, here for Use Server).
    public func bulkPreview(
        _ operationIds: [Int64], with resolution: ConflictResolution
    ) throws(SyncError) -> BulkPreview {
        var preview = BulkPreview(resolution: resolution, conflicts: [])
        for id in operationIds {
            guard let conflict = try conflict(id) else { continue }
            let changed = fieldMerges(of: conflict).filter { !ThreeWayMerge.same($0.client, $0.server) }
            let deletes: Bool
            switch resolution {
            case .useClient: deletes = conflict.operation.kind == .delete
            case .useServer, .cancel: deletes = conflict.deletedOnServer
            }
            preview.conflicts.append(
                BulkPreview.Conflict(
                    operationId: id, itemId: conflict.operation.itemId,
                    title: (conflict.clientItem ?? conflict.serverItem ?? conflict.base)?["text"]?.stringValue,
                    fields: changed.map(\.name), deletes: deletes))
        }
        return preview
    }

    /// The item a per-field pick would push, without pushing it.
    public func pickPreview(
        _ operationId: Int64, picking picks: [String: ConflictSide], requireAll: Bool = false
    ) throws -> Item {
        try settlement.pickPreview(operationId, picking: picks, requireAll: requireAll)
    }

    /// The three-way merge of a conflict's fields.
    public func merge(of conflict: SyncConflict) -> MergeOutcome { settlement.merge(of: conflict) }

    /// Each field of a conflict: base, client and server values, and how they changed.
    public func fieldMerges(of conflict: SyncConflict) -> [FieldMerge] { settlement.fieldMerges(of: conflict) }

    /// The conflict policy of `table`: the one saved in the store, else the context's default.
    public func policy(for table: String) throws(SyncError) -> ConflictPolicy {
        try settlement.conflictPolicy(for: table)
    }

    /// Saves the conflict policy of `table` for the following pushes.
    public func setPolicy(_ policy: ConflictPolicy, for table: String) async throws(SyncError) {
        let store = settlement.store
        _ = try store.description(of: table)
        try await store.asyncWrite { db in
            try store.setConfig(db, ConflictSettlement.policyKey(table), policy.rawValue)
        }
    }

    /// The policy of every described table, by table name.
    public func policies() throws(SyncError) -> [String: ConflictPolicy] {
        var policies: [String: ConflictPolicy] = [:]
        for table in settlement.store.tables.keys { policies[table] = try settlement.conflictPolicy(for: table) }
        return policies
    }

    /// Use Client: keeps the local values, adopts the server's version and pushes this operation now
    /// through the push driver. An insert that hit an existing id becomes an update; an update of an
    /// item the server deleted re-creates it. If the server changed again meanwhile, the result is a
    /// new conflict. When the service accepts it, the outcome goes to the journal.
    func useClient(_ operationId: Int64, batch: String? = nil) async throws -> OperationOutcome {
        try await runDecision(operationId, PendingDecision(decision: .useClient, decidedBy: .person, batch: batch))
    }

    /// Use Server (see ``ConflictSettlement/useServer(_:decidedBy:decision:batch:)``), by a person.
    func useServer(_ operationId: Int64, batch: String? = nil) async throws(SyncError) {
        try await settlement.useServer(operationId, batch: batch)
    }

    /// Pushes a decision that sends local values (Use Client, a per-field pick) as one Use Client job,
    /// and journals it when the service accepts it.
    private func runDecision(_ operationId: Int64, _ decision: PendingDecision) async throws -> OperationOutcome {
        let outcome = try await jobs.run(.useClient(operationId: operationId)) { [pusher] in
            await JobEnding.of { .decided(try await pusher.pushDecision(operationId, decision)) }
        }
        guard case .decided(let decided) = outcome else { preconditionFailure("a Use Client ends decided") }
        return decided
    }
}
