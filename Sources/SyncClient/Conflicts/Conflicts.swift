import Foundation
import SyncProtocol

/// A context's conflicts and how they are decided: the conflicts waiting for a person, Use Client,
/// Use Server, Cancel, a per-field pick, bulk decisions, and each table's conflict policy (see
/// ``SyncContext/conflicts``).
public struct Conflicts: Sendable {
    let context: SyncContext

    /// Every conflicted operation in push order, with base, client and server values.
    public func all() throws(SyncError) -> [SyncConflict] {
        try context.read { [context] db in
            try context.queue.all(db, in: .conflict).compactMap { operation in try context.conflict(db, operation) }
        }
    }

    /// The conflict of one operation; nil when it is not in conflict.
    public func conflict(_ operationId: Int64) throws(SyncError) -> SyncConflict? {
        try context.conflict(operationId)
    }

    /// Applies a choice to a conflicted operation; Use Client pushes it at once and says how it went
    /// (`.conflict` again when the server changed meanwhile).
    @discardableResult
    public func resolve(_ operationId: Int64, with resolution: ConflictResolution) async throws -> OperationOutcome? {
        switch resolution {
        case .useClient: return try await context.useClient(operationId)
        case .useServer:
            try await context.useServer(operationId)
            return nil
        case .cancel:
            try await context.queue.cancel(operationId)
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
                outcomes[id] = try await context.useClient(id, batch: batch)
            case .useServer, .cancel:
                try await context.useServer(id, batch: batch)
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
        let result = try context.pickPreview(operationId, picking: picks, requireAll: true)
        return try await context.runDecision(
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
        try context.pickPreview(operationId, picking: picks, requireAll: requireAll)
    }

    /// The three-way merge of a conflict's fields.
    public func merge(of conflict: SyncConflict) -> MergeOutcome { context.merge(of: conflict) }

    /// Each field of a conflict: base, client and server values, and how they changed.
    public func fieldMerges(of conflict: SyncConflict) -> [FieldMerge] { context.fieldMerges(of: conflict) }

    /// The conflict policy of `table`: the one saved in the store, else the context's default.
    public func policy(for table: String) throws(SyncError) -> ConflictPolicy { try context.conflictPolicy(for: table) }

    /// Saves the conflict policy of `table` for the following pushes.
    public func setPolicy(_ policy: ConflictPolicy, for table: String) async throws(SyncError) {
        _ = try context.description(of: table)
        try await context.write { [store = context.store] db in
            try store.setConfig(db, SyncContext.policyKey(table), policy.rawValue)
        }
    }

    /// The policy of every described table, by table name.
    public func policies() throws(SyncError) -> [String: ConflictPolicy] {
        var policies: [String: ConflictPolicy] = [:]
        for table in context.tables { policies[table.name] = try context.conflictPolicy(for: table.name) }
        return policies
    }
}

extension SyncContext {
    /// The conflicts waiting for a decision, and how to decide them.
    public nonisolated var conflicts: Conflicts { Conflicts(context: self) }
}
