import Foundation

/// What a person does about stuck operations: Hold, Release, Retry now and Discard, one at a time or
/// in bulk.
extension SyncContext {
    /// Holds an operation back: it stays queued, no push sends it or any later operation of its item,
    /// and an edit of the item joins it as usual (it stays held). Returns false when it was held already.
    ///
    /// - Throws: ``SyncError/operationInConflict(_:)`` (decide it instead),
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationNotFound(_:)``,
    ///   ``SyncError/invalidHoldReason(_:)`` (over 500 characters, or control characters).
    @discardableResult
    nonisolated func hold(_ operationId: Int64, reason: String? = nil) throws(SyncError) -> Bool {
        let reason = try SyncOperationQueue.holdReason(reason)
        return try write { [queue] db in try queue.hold(db, id: operationId, reason: reason) }
    }

    /// Releases a held operation: the next push sends it (and the item's later operations after it).
    /// Returns false when it was not held.
    @discardableResult
    nonisolated func release(_ operationId: Int64) throws(SyncError) -> Bool {
        try write { [queue] db in try queue.release(db, id: operationId) }
    }

    /// Retry now, without the push: a refused operation is pending again, its error forgotten; the
    /// caller starts a push (the dashboard in the background). Returns the operation as it is now.
    ///
    /// - Throws: ``SyncError/operationHeld(_:)`` (release it first), ``SyncError/operationInConflict(_:)``,
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationWaitsBehind(_:earlier:)``.
    @discardableResult
    nonisolated func prepareRetry(_ operationId: Int64) throws(SyncError) -> TableOperation {
        try write { [queue] db in try queue.prepareRetry(db, id: operationId) }
    }

    /// Retry now: ``prepareRetry(_:)``, then a push (joining one that runs), which sends the
    /// operation in its turn. Returns what became of it (``OperationOutcome/skipped`` when the push
    /// did not reach it).
    func retry(_ operationId: Int64) async throws -> OperationOutcome {
        try prepareRetry(operationId)
        let result = try await push()
        if let outcome = result.outcome(of: operationId) { return outcome }
        return try operations.operation(operationId) == nil ? .pushed : .skipped
    }

    /// Applies `action` to one operation: Hold (see ``QueueAction``), Release, Retry (made pending;
    /// the caller starts the push) or Discard. Returns false when the operation was already as the
    /// action leaves it (held, or not held).
    ///
    /// - Throws: what refuses the action: ``SyncError/operationInConflict(_:)`` (decide it instead),
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationNotFound(_:)``,
    ///   ``SyncError/operationHeld(_:)`` (release it first), ``SyncError/operationWaitsBehind(_:earlier:)``,
    ///   ``SyncError/invalidHoldReason(_:)`` (over 500 characters, or control characters).
    @discardableResult
    nonisolated func perform(
        _ action: QueueAction, on operationId: Int64, reason: String? = nil
    ) throws(SyncError)
        -> Bool
    {
        switch action {
        case .hold: return try hold(operationId, reason: reason)
        case .release: return try release(operationId)
        case .retry:
            try prepareRetry(operationId)
            return true
        case .discard:
            try queue.discard(operationId)
            return true
        }
    }

    /// Applies one action to each operation, each in its own transaction: the outcome of each, in the
    /// order of `operationIds`. A Retry makes the refused ones pending; the caller starts the push.
    nonisolated func perform(
        _ action: QueueAction, on operationIds: [Int64], reason: String? = nil
    ) throws(SyncError) -> [QueueActionResult] {
        let reason = try SyncOperationQueue.holdReason(reason)
        var results: [QueueActionResult] = []
        for id in operationIds {
            do {
                let changed = try perform(action, on: id, reason: reason)
                results.append(QueueActionResult(id: id, outcome: changed ? .done : .unchanged))
            } catch {
                if case .storage = error { throw error }
                results.append(QueueActionResult(id: id, outcome: .refused, message: error.description))
            }
        }
        return results
    }
}
