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
                try await sendInOrder(queued.map(\.id), driver, into: &result)
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

    /// One operation on the wire at a time, in queue order. Each operation's attempt begins in the
    /// transaction that stores the previous one's answer, so the usual push commits once per
    /// operation; an attempt begun and then not sent (cancelled) is left attempted, never lost.
    private func sendInOrder(_ ids: [Int64], _ driver: PushDriver, into result: inout PushResult) async throws {
        var begun: PushAttempt?
        defer {
            if let begun {
                try? queue.markAttempted(begun.operationId, message: StopReason.cancelled.description, status: nil)
            }
        }
        for (index, id) in ids.enumerated() {
            if Task.isCancelled { throw SyncError.stopped(.cancelled) }
            let next = index + 1 < ids.count ? ids[index + 1] : nil
            let sent = try await driver.send(id, begun: begun.take(), thenBegin: next)
            begun = sent.nextAttempt
            result.add(try await settling(sent.outcome, id, driver), id)
            monitor.update { $0.done += 1 }
        }
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
        // Completion order is not queue order: report in queue order.
        for keyPath in [\PushResult.pushed, \.conflicts, \.failed, \.resolved, \.skipped]
            as [WritableKeyPath<PushResult, [Int64]>]
        {
            result[keyPath: keyPath].sort()
        }
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
