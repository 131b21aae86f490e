import Foundation
import GRDB
import SyncProtocol

extension SyncContext {
    /// Sends the queued operations in order: inserts (POST), updates (PATCH) and deletes (DELETE),
    /// the last two with `If-Match`. Conflicts and refusals are recorded and push goes on.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the server is unreachable, times out, fails (5xx),
    ///   refuses access (401/403), offline mode is on or the push is cancelled (``cancel()``);
    ///   ``SyncError/serviceFault(_:)`` when the service answers about another item. The queue is
    ///   intact and retrying is safe. A second caller while a push runs shares its result.
    public func push() async throws -> PushResult {
        try await exclusive(join: \.push, start: SyncJob.push) { try await self.runPush() }
    }

    func runPush() async throws -> PushResult {
        let driver = PushDriver(queue: queue, transport: try readyTransport(.push, table: nil))
        let queued = try read { [queue] db in try queue.sendable(db) }
        monitor.update {
            $0 = SyncProgress(activity: .pushing, table: nil, done: 0, total: queued.count, startedAt: Date())
        }
        defer { monitor.update { $0 = .idle } }
        var result = PushResult()
        do {
            if pushConcurrency <= 1 {
                try await sendInOrder(queued, driver, into: &result)
            } else {
                try await sendWindowed(queued.map { ($0.id, $0.table + "\u{0}" + $0.itemId) }, driver, into: &result)
            }
        } catch {
            let error = Self.syncError(error)
            recordLastSync(SyncSummary(push: result, error: error))
            throw error
        }
        recordLastSync(SyncSummary(push: result, error: nil))
        return result
    }

    /// Sends one operation; a conflict goes to its table's policy (``applyPolicy(_:driver:)``).
    private func sendSettling(_ id: Int64, _ driver: PushDriver) async throws -> OperationOutcome {
        try await settling(driver.send(id), id, driver)
    }

    /// A conflict goes to its table's policy (``applyPolicy(_:driver:)``); other outcomes stand.
    private func settling(
        _ outcome: OperationOutcome, _ id: Int64, _ driver: PushDriver
    ) async throws
        -> OperationOutcome
    {
        guard outcome == .conflict else { return outcome }
        return try await applyPolicy(id, driver: driver)
    }

    /// An operation a push sends, with the item it changes.
    typealias QueuedOperation = (id: Int64, table: String, itemId: String)

    /// How many operations a push in order begins in one transaction, ahead of their requests.
    static let pushBatchSize = 16

    /// One operation on the wire at a time, in queue order, in batches of ``pushBatchSize``, with the
    /// local work off the wire's path: while one batch's requests go out, one transaction stores the
    /// answers of the batch before and begins the attempts of the batch after.
    ///
    /// - Every request leaves with its operation in flight, begun in a committed transaction.
    /// - A batch ends before a second operation of an item, or one of an item in the batch being
    ///   sent: that operation begins once the earlier one's answer is stored.
    /// - A crash before answers are stored leaves their operations in flight: attempted when the store
    ///   opens again, and recognised as applied by the next push.
    /// - When the push stops, the answers received are still stored, and the operations begun but not
    ///   sent are put back as they were (``SyncOperationQueue/release(_:)``).
    private func sendInOrder(
        _ queued: [QueuedOperation], _ driver: PushDriver, into result: inout PushResult
    ) async throws {
        var remaining = queued[...]
        var sending: [(operation: QueuedOperation, attempt: PushAttempt?)] = []
        var received: [PushDriver.AppliedAnswer] = []
        var bookkeeping: (answers: [PushDriver.AppliedAnswer], task: Task<[PushAttempt?], any Error>)?
        func stored(_ answers: [PushDriver.AppliedAnswer]) {
            for answer in answers { result.add(.pushed, answer.operationId) }
        }
        do {
            repeat {
                let upcoming = Self.batch(from: remaining, besides: sending.map(\.operation))
                remaining = remaining.dropFirst(upcoming.count)
                let answers = received
                received = []
                // Off the actor: the transaction must not hold up the loop, which needs the actor
                // between one answer and the next request.
                let task = Task.detached { try driver.store(answers, thenBegin: upcoming.map(\.id)) }
                bookkeeping = (answers, task)
                while let (operation, attempt) = sending.first {
                    if Task.isCancelled { throw SyncError.stopped(.cancelled) }
                    sending.removeFirst()
                    if let attempt {
                        switch try await driver.settle(attempt) {
                        case .applied(let answer):
                            received.append(answer)
                        case .recorded(let outcome):
                            result.add(try await settling(outcome, operation.id, driver), operation.id)
                        }
                    } else {
                        result.add(.skipped, operation.id)
                    }
                    monitor.update { $0.done += 1 }
                }
                let begun = try await task.value
                bookkeeping = nil
                stored(answers)
                sending = Array(zip(upcoming, begun))
            } while !sending.isEmpty || !remaining.isEmpty
            _ = try driver.store(received)
            stored(received)
        } catch {
            var unsent = sending.compactMap(\.attempt)
            if let (answers, task) = bookkeeping.take(), let begun = try? await task.value {
                stored(answers)
                unsent += begun.compactMap { $0 }
            }
            if (try? driver.store(received)) != nil { stored(received) }
            try? queue.release(unsent)
            throw error
        }
        result.sortInQueueOrder()
    }

    /// The operations at the start of `queued` up to one of an item that is in `sending` or already
    /// in the batch, at most ``pushBatchSize``.
    private static func batch(
        from queued: ArraySlice<QueuedOperation>, besides sending: [QueuedOperation]
    ) -> [QueuedOperation] {
        func key(_ operation: QueuedOperation) -> String { operation.table + "\u{0}" + operation.itemId }
        var items = Set(sending.map(key))
        return Array(queued.prefix(pushBatchSize).prefix { items.insert(key($0)).inserted })
    }

    /// Up to ``pushConcurrency`` operations on the wire at once, started in queue order; two operations
    /// of the same item never overlap. The first stop cancels the others (they stay queued, attempted).
    private func sendWindowed(
        _ queued: [(id: Int64, item: String)], _ driver: PushDriver, into result: inout PushResult
    ) async throws {
        try await withThrowingTaskGroup(of: (Int64, String, OperationOutcome).self) { group in
            var busyItems: Set<String> = []
            var running = 0
            func collect(_ group: inout ThrowingTaskGroup<(Int64, String, OperationOutcome), any Error>) async throws {
                guard let (id, item, outcome) = try await group.next() else { return }
                running -= 1
                busyItems.remove(item)
                result.add(outcome, id)
                monitor.update { $0.done += 1 }
            }
            for (id, item) in queued {
                while running >= pushConcurrency || busyItems.contains(item) { try await collect(&group) }
                if Task.isCancelled { throw SyncError.stopped(.cancelled) }
                busyItems.insert(item)
                running += 1
                group.addTask { (id, item, try await self.sendSettling(id, driver)) }
            }
            while running > 0 { try await collect(&group) }
        }
        result.sortInQueueOrder()
    }

    /// The transport, or the reason there is none (offline mode, no address).
    func readyTransport(_ kind: SyncSummary.Kind, table: String?) throws(SyncError) -> HTTPTransport {
        var failure: SyncError?
        if monitor.offline { failure = .stopped(.offline) } else if transport == nil { failure = .noRemote }
        if let failure {
            recordLastSync(
                SyncSummary(
                    kind: kind, table: table, finishedAt: Date(), pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                    stopReason: failure == .stopped(.offline) ? .offline : nil,
                    error: failure == .noRemote ? failure.description : nil))
            throw failure
        }
        return transport!
    }

    /// Any error of a sync job as a ``SyncError``: a cancelled task is ``StopReason/cancelled``.
    static func syncError(_ error: any Error) -> SyncError {
        switch error {
        case let error as SyncError: error
        case is CancellationError: .stopped(.cancelled)
        default: .storage(StoreFailure(error))
        }
    }
}

extension SyncSummary {
    /// The summary of a push that ended with `error` (nil: ran to the end).
    init(push result: PushResult, error: SyncError?) {
        var stopReason: StopReason?
        if case .stopped(let reason)? = error { stopReason = reason }
        self.init(
            kind: .push, table: nil, finishedAt: Date(), pushed: result.pushed.count,
            conflicts: result.conflicts.count, failed: result.failed.count, pulled: 0, stopReason: stopReason,
            error: stopReason == nil ? error?.description : nil)
    }
}
