import Foundation
import GRDB
import SyncProtocol

/// Hold, Release and the first half of Retry now: the person-driven transitions of stuck operations,
/// each decided by ``QueueActionRule`` and applied with its history event in the caller's transaction.
extension SyncOperationQueue {
    /// The longest reason a hold keeps.
    static let maximumHoldReason = 500

    /// A reason as it is kept: trimmed, nil when empty.
    static func holdReason(_ text: String?) throws(SyncError) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        guard trimmed.count <= maximumHoldReason else {
            throw .invalidHoldReason("it has \(trimmed.count) characters; keep it to \(maximumHoldReason)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" })
        else { throw .invalidHoldReason("it contains control characters; write it as plain text") }
        return trimmed
    }

    /// What `action` would do to the operation now (``QueueActionRule``), with the operation.
    func rule(_ db: Database, _ action: QueueAction, id: Int64) throws -> (TableOperation, QueueActionRule) {
        let operation = try existingOperation(db, id: id)
        let earlier = try operations(db, table: operation.table, itemId: operation.itemId).first { $0.id < id }
        return (
            operation,
            QueueActionRule.decide(
                action, id: id, state: operation.state, isHeld: operation.isHeld, earlier: earlier?.id)
        )
    }

    /// Holds the operation back from pushes (with the item's later operations); false when it was
    /// held already.
    @discardableResult
    func hold(_ db: Database, id: Int64, reason: String?, at date: Date = Date()) throws -> Bool {
        let (_, rule) = try rule(db, .hold, id: id)
        switch rule {
        case .refuse(let error): throw error
        case .unchanged: return false
        case .apply:
            try OperationRecord.filter(key: id).updateAll(
                db, Columns.heldAt.set(to: Timestamp.string(date)), Columns.heldReason.set(to: reason))
            try history.recordOperation(
                db, .held, operationId: id, detail: reason.map { "because: \($0)" } ?? "no reason given")
            return true
        }
    }

    /// Lets pushes send the operation again; false when it was not held.
    @discardableResult
    func release(_ db: Database, id: Int64) throws -> Bool {
        let (operation, rule) = try rule(db, .release, id: id)
        switch rule {
        case .refuse(let error): throw error
        case .unchanged: return false
        case .apply:
            try OperationRecord.filter(key: id).updateAll(
                db, Columns.heldAt.set(to: nil), Columns.heldReason.set(to: nil))
            let since = operation.hold.map { "held since \(RowExplanation.time($0.since))" }
            try history.recordOperation(db, .released, operationId: id, detail: since)
            return true
        }
    }

    /// Retry now, before its push: a refused operation is pending again with its error forgotten (a
    /// pending or attempted one stays as it is). Refused for a held operation, one in conflict or in
    /// flight, and one behind an earlier operation of its item.
    func prepareRetry(_ db: Database, id: Int64) throws -> TableOperation {
        var (operation, rule) = try rule(db, .retry, id: id)
        switch rule {
        case .refuse(let error): throw error
        case .unchanged: return operation
        case .apply:
            guard operation.state == .failed else { return operation }
            operation.state = .pending
            operation.message = nil
            try update(db, operation)
            try clearError(db, operationId: id)
            try history.recordOperation(db, .cancelled, operationId: id, detail: "retry now")
            return operation
        }
    }

    /// How many operations are held, by the state underneath.
    func heldCounts(_ db: Database) throws -> [OperationState: Int] {
        try counts(db, of: OperationRecord.filter(Columns.heldAt != nil))
    }
}
