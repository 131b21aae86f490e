/// A context's queue of local changes waiting for the service: reading it (in push order, by item,
/// by page, counted) and acting on one operation or many (see ``SyncContext/operations``).
public struct QueuedOperations: Sendable {
    let queue: SyncOperationQueue
    /// Runs a push job (joining one that runs): what Retry starts.
    let push: @Sendable () async throws -> PushResult

    /// The queue in push order (optionally one table's).
    public func all(table: String? = nil) throws(SyncError) -> [TableOperation] {
        try queue.store.read { [queue] db in try queue.all(db, table: table) }
    }

    /// One queued operation.
    public func operation(_ operationId: Int64) throws(SyncError) -> TableOperation? {
        try queue.store.read { [queue] db in try queue.operation(db, id: operationId) }
    }

    /// The queued operations of one item (at most one, plus one in flight).
    public func of(table: String, itemId: String) throws(SyncError) -> [TableOperation] {
        try queue.store.read { [queue] db in try queue.operations(db, table: table, itemId: itemId) }
    }

    /// The newest queued operation of each of these items that has one, by item id.
    public func latest(table: String, itemIds: [String]) throws(SyncError) -> [String: OperationSummary] {
        let summaries = try queue.store.read { [queue] db in
            // In chunks, under SQLite's limit on bound parameters.
            try stride(from: 0, to: itemIds.count, by: 500).flatMap { start in
                let chunk = Array(itemIds[start..<min(start + 500, itemIds.count)])
                return try queue.summaries(db, table: table, itemIds: chunk)
            }
        }
        return Dictionary(summaries.map { ($0.itemId, $0) }) { older, newer in older.id < newer.id ? newer : older }
    }

    /// One page of the queue in push order with each operation's local row (at most `limit`).
    public func page(_ position: QueuePosition, limit: Int = 100) throws(SyncError) -> QueuePage {
        try queue.store.read { [queue] db in try queue.page(db, position, limit: max(1, limit)) }
    }

    /// Each table's waiting changes, conflicts and held changes (tables with no operation are absent).
    public func countsByTable() throws(SyncError) -> [String: TableQueueCounts] {
        try queue.store.read { [queue] db in try queue.countsByTable(db) }
    }

    /// The changes of `table` waiting to be pushed (pending, attempted or being sent) and those in
    /// conflict, counted by one query.
    public func counts(table: String) throws(SyncError) -> (waiting: Int, conflicts: Int) {
        let counts = try queue.store.read { [queue] db in try queue.counts(db, table: table) }
        return (counts.filter(\.key.isWaiting).values.reduce(0, +), counts[.conflict] ?? 0)
    }

    /// The last error of an operation (conflict or refusal), with the server's and the client's items.
    public func error(of operationId: Int64) throws(SyncError) -> OperationError? {
        try queue.store.read { [queue] db in try queue.error(db, operationId: operationId) }
    }

    /// Applies `action` to one operation: Hold, Release, Retry (made pending; the caller starts the
    /// push) or Discard. Returns false when the operation was already as the action leaves it.
    ///
    /// - Throws: what refuses the action: ``SyncError/operationInConflict(_:)`` (decide it instead),
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationNotFound(_:)``,
    ///   ``SyncError/operationHeld(_:)`` (release it first), ``SyncError/operationWaitsBehind(_:earlier:)``,
    ///   ``SyncError/invalidHoldReason(_:)`` (over 500 characters, or control characters).
    @discardableResult
    public func perform(
        _ action: QueueAction, on operationId: Int64, reason: String? = nil
    ) async throws(SyncError) -> Bool {
        switch action {
        case .hold: return try await hold(operationId, reason: reason)
        case .release: return try await release(operationId)
        case .retry:
            try await prepareRetry(operationId)
            return true
        case .discard:
            try await queue.discard(operationId)
            return true
        }
    }

    /// Applies one action to each operation, each in its own transaction: the outcome of each, in the
    /// order of `operationIds`. A Retry makes the refused ones pending; the caller starts the push.
    public func perform(
        _ action: QueueAction, on operationIds: [Int64], reason: String? = nil
    ) async throws(SyncError) -> [QueueActionResult] {
        let reason = try SyncOperationQueue.holdReason(reason)
        var results: [QueueActionResult] = []
        for id in operationIds {
            do {
                let changed = try await perform(action, on: id, reason: reason)
                results.append(QueueActionResult(id: id, outcome: changed ? .done : .unchanged))
            } catch {
                if case .storage = error { throw error }
                results.append(QueueActionResult(id: id, outcome: .refused, message: error.description))
            }
        }
        return results
    }

    /// Retry now: the operation is made pending, then a push (joining one that runs) sends it in its
    /// turn. Returns what became of it (``OperationOutcome/skipped`` when the push did not reach it).
    public func retry(_ operationId: Int64) async throws -> OperationOutcome {
        try await prepareRetry(operationId)
        let result = try await push()
        if let outcome = result.outcome(of: operationId) { return outcome }
        return try operation(operationId) == nil ? .pushed : .skipped
    }

    // MARK: What a person does about a stuck operation, each in one transaction

    /// Holds an operation back: it stays queued, no push sends it or any later operation of its item,
    /// and an edit of the item joins it as usual (it stays held). Returns false when it was held already.
    ///
    /// - Throws: ``SyncError/operationInConflict(_:)`` (decide it instead),
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationNotFound(_:)``,
    ///   ``SyncError/invalidHoldReason(_:)`` (over 500 characters, or control characters).
    @discardableResult
    func hold(_ operationId: Int64, reason: String? = nil) async throws(SyncError) -> Bool {
        let reason = try SyncOperationQueue.holdReason(reason)
        return try await queue.store.asyncWrite { [queue] db in try queue.hold(db, id: operationId, reason: reason) }
    }

    /// Releases a held operation: the next push sends it (and the item's later operations after it).
    /// Returns false when it was not held.
    @discardableResult
    func release(_ operationId: Int64) async throws(SyncError) -> Bool {
        try await queue.store.asyncWrite { [queue] db in try queue.release(db, id: operationId) }
    }

    /// Retry now, without the push: a refused operation is pending again, its error forgotten; the
    /// caller starts a push (the dashboard in the background). Returns the operation as it is now.
    ///
    /// - Throws: ``SyncError/operationHeld(_:)`` (release it first), ``SyncError/operationInConflict(_:)``,
    ///   ``SyncError/operationInFlight(_:)``, ``SyncError/operationWaitsBehind(_:earlier:)``.
    @discardableResult
    func prepareRetry(_ operationId: Int64) async throws(SyncError) -> TableOperation {
        try await queue.store.asyncWrite { [queue] db in try queue.prepareRetry(db, id: operationId) }
    }
}
