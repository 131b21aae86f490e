import GRDB

/// Each table's conflict policy, and how a push applies it.
extension ConflictSettlement {
    /// The conflict policy of `table`: the one saved in the store, else ``defaultPolicy``.
    func conflictPolicy(for table: String) throws(SyncError) -> ConflictPolicy {
        try store.read { db in try conflictPolicy(db, for: table) }
    }

    /// ``conflictPolicy(for:)`` in the caller's transaction.
    func conflictPolicy(_ db: Database, for table: String) throws -> ConflictPolicy {
        try store.config(db, Self.policyKey(table), as: ConflictPolicy.self) ?? defaultPolicy
    }

    static func policyKey(_ table: String) -> String { "conflictPolicy|\(table)" }

    /// Settles a conflict that push just recorded as its table's policy says, in the transaction that
    /// recorded it: leaves it for a person (ask, or a true collision under merge), takes the server's
    /// version, or adopts the server's version under the local or merged values, to be sent again by
    /// the same push run (then it returns nil). Every outcome is journaled (a sent one when the
    /// service applies it).
    func settleByPolicy(_ db: Database, _ recorded: RecordedConflict) throws -> OperationOutcome? {
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

    /// Gives the conflicts that wait to their table's policy again, before a push reads the queue: a
    /// conflict met a second time in one push waits (so that a push never loops), and the next push
    /// settles it with the service's newer copy; under `merge`, a collision keeps waiting for a person.
    /// A held operation is left as it is.
    func settleWaitingConflicts(_ db: Database) throws {
        for operation in try conflictsForTheirPolicy(db) {
            guard let error = try queue.error(db, operationId: operation.id) else { continue }
            _ = try settleByPolicy(db, RecordedConflict(operation: operation, error: error))
        }
    }

    /// Whether a conflict waits that its table's policy settles now (a collision under `merge` does
    /// not): then a sync pushes, though nothing else is queued.
    func hasConflictsForTheirPolicy(_ db: Database) throws -> Bool {
        try conflictsForTheirPolicy(db).contains { operation in
            guard let conflict = try conflict(db, operation) else { return false }
            if case .ask = try conflictPolicy(db, for: operation.table).action(for: merge(of: conflict)) {
                return false
            }
            return true
        }
    }

    /// The conflicts (not held) of tables whose policy settles conflicts by itself.
    private func conflictsForTheirPolicy(_ db: Database) throws -> [TableOperation] {
        try queue.all(db, in: .conflict).filter { operation in
            try operation.hold == nil && conflictPolicy(db, for: operation.table) != .ask
        }
    }
}
