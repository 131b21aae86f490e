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
    /// One conflicted operation, nil if it is not (or no longer) in conflict.
    nonisolated func conflict(_ operationId: Int64) throws(SyncError) -> SyncConflict? {
        try read { [queue] db in
            guard let operation = try queue.operation(db, id: operationId), operation.state == .conflict else {
                return nil
            }
            return try conflict(db, operation)
        }
    }

    nonisolated func conflict(_ db: Database, _ operation: TableOperation) throws -> SyncConflict? {
        guard let error = try queue.error(db, operationId: operation.id) else { return nil }
        return try conflict(db, operation, error)
    }

    /// The conflict of `operation` as `error` records it, with the local row read in the caller's transaction.
    nonisolated func conflict(
        _ db: Database, _ operation: TableOperation, _ error: OperationError
    ) throws
        -> SyncConflict?
    {
        guard let table = store.tables[operation.table] else { return nil }
        let client = operation.kind == .delete ? nil : try store.readItem(db, table: table, id: operation.itemId)
        return SyncConflict(operation: operation, error: error, clientItem: client)
    }

    /// Use Client: keeps the local values, adopts the server's version and pushes this operation now
    /// through the push driver. An insert that hit an existing id becomes an update; an update of an
    /// item the server deleted re-creates it. If the server changed again meanwhile, the result is a
    /// new conflict. When the service accepts it, the outcome goes to the journal.
    func useClient(
        _ operationId: Int64, decidedBy: JournalEntry.Decider = .person, batch: String? = nil
    ) async throws -> OperationOutcome {
        try await runDecision(
            operationId, PendingDecision(decision: .useClient, decidedBy: decidedBy, batch: batch))
    }

    /// Pushes a decision that sends local values (Use Client, a per-field pick) as one Use Client job,
    /// and journals it when the service accepts it.
    func runDecision(_ operationId: Int64, _ decision: PendingDecision) async throws -> OperationOutcome {
        let outcome = try await jobs.run(.useClient(operationId: operationId)) {
            .decided(try await self.pushDecisionNow(operationId, decision))
        }
        guard case .decided(let decided) = outcome else { preconditionFailure("a Use Client ends decided") }
        return decided
    }

    func pushDecisionNow(_ operationId: Int64, _ decision: PendingDecision) async throws -> OperationOutcome {
        let driver = pushDriver(try await readyTransport(.push, table: nil))
        var result = PushResult()
        do {
            try await holdDecision(operationId, decision)
            let outcome = try await pushOne(operationId, driver: driver)
            result.add(outcome, operationId)
            await recordLastSync(SyncSummary(push: result, error: nil))
            return outcome
        } catch {
            await recordLastSync(SyncSummary(push: result, error: SyncError(error)))
            throw error
        }
    }

    /// Use Server: writes the server's item into the local table (or removes the local row when the
    /// server deleted it), drops the operation and journals the outcome, in one transaction.
    nonisolated func useServer(
        _ operationId: Int64, decidedBy: JournalEntry.Decider = .person, decision: JournalEntry.Decision = .useServer,
        batch: String? = nil
    ) async throws(SyncError) {
        try await write { db in
            try self.useServer(db, operationId, decidedBy: decidedBy, decision: decision, batch: batch)
        }
    }

    /// ``useServer(_:decidedBy:decision:batch:)`` in the caller's transaction.
    nonisolated func useServer(
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
    nonisolated func useServer(
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
}
