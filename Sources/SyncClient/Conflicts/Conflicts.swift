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
        try await context.resolve(operationId, with: resolution)
    }

    /// Applies Use Client or Use Server to several conflicts as one batch (undone together with
    /// ``DecisionJournal/undo(batch:)``); conflicts settled meanwhile are skipped.
    public func resolve(_ operationIds: [Int64], with resolution: ConflictResolution) async throws -> BulkDecision {
        try await context.resolve(operationIds, with: resolution)
    }

    /// A per-field pick: each colliding field takes the side picked, and the result is pushed now.
    public func resolve(_ operationId: Int64, picking picks: [String: ConflictSide]) async throws -> OperationOutcome {
        try await context.resolve(operationId, picking: picks)
    }

    /// What a bulk decision would change, conflict by conflict.
    public func bulkPreview(
        _ operationIds: [Int64], with resolution: ConflictResolution
    ) throws(SyncError)
        -> BulkPreview
    {
        try context.bulkPreview(operationIds, with: resolution)
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
    public func setPolicy(_ policy: ConflictPolicy, for table: String) throws(SyncError) {
        _ = try context.description(of: table)
        try context.write { [store = context.store] db in
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
