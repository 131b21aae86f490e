import Foundation

/// What a person does about a stuck operation: Hold, Release and Retry now, each in one transaction
/// (``QueuedOperations`` applies them, and Discard, to one operation or many).
extension SyncContext {
    /// Holds an operation back: it stays queued, no push sends it or any later operation of its item,
    /// and an edit of the item joins it as usual (it stays held). Returns false when it was held already.
    ///
    /// - Throws: ``SyncError/operationInConflict(_:)`` (decide it instead),
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationNotFound(_:)``,
    ///   ``SyncError/invalidHoldReason(_:)`` (over 500 characters, or control characters).
    @discardableResult
    nonisolated func hold(_ operationId: Int64, reason: String? = nil) async throws(SyncError) -> Bool {
        let reason = try SyncOperationQueue.holdReason(reason)
        return try await write { [queue] db in try queue.hold(db, id: operationId, reason: reason) }
    }

    /// Releases a held operation: the next push sends it (and the item's later operations after it).
    /// Returns false when it was not held.
    @discardableResult
    nonisolated func release(_ operationId: Int64) async throws(SyncError) -> Bool {
        try await write { [queue] db in try queue.release(db, id: operationId) }
    }

    /// Retry now, without the push: a refused operation is pending again, its error forgotten; the
    /// caller starts a push (the dashboard in the background). Returns the operation as it is now.
    ///
    /// - Throws: ``SyncError/operationHeld(_:)`` (release it first), ``SyncError/operationInConflict(_:)``,
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationWaitsBehind(_:earlier:)``.
    @discardableResult
    nonisolated func prepareRetry(_ operationId: Int64) async throws(SyncError) -> TableOperation {
        try await write { [queue] db in try queue.prepareRetry(db, id: operationId) }
    }
}
