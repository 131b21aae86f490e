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
        guard case .pushed(let result) = try await run(.push) else { preconditionFailure("a push ends pushed") }
        return result
    }

    func runPush() async throws -> PushResult {
        let driver = pushDriver(try await readyTransport(.push, table: nil))
        var (queued, waiting) = try await store.asyncRead { [queue] db in
            (try queue.sendable(db), try self.hasConflictsForTheirPolicy(db))
        }
        if waiting {
            queued = try await store.asyncWrite { [queue] db in
                try self.settleWaitingConflicts(db)
                return try queue.sendable(db)
            }
        }
        monitor.update {
            $0 = SyncProgress(activity: .pushing, table: nil, done: 0, total: queued.count, startedAt: Date())
        }
        defer { monitor.update { $0 = .idle } }
        let run = PushRun(
            queued.map { PushRun.Queued(id: $0.id, table: $0.table, itemId: $0.itemId) }, window: pushWindow,
            retry: connectionRetry)
        let (result, error) = await runner(driver).run(run)
        await recordLastSync(SyncSummary(push: result, error: error))
        if let error { throw error }
        return result
    }

    /// Gives the conflicts that wait to their table's policy again, before a push reads the queue: a
    /// conflict met a second time in one push waits (so that a push never loops), and the next push
    /// settles it with the service's newer copy; under `merge`, a collision keeps waiting for a person.
    /// A held operation is left as it is.
    nonisolated func settleWaitingConflicts(_ db: Database) throws {
        for operation in try conflictsForTheirPolicy(db) {
            guard let error = try queue.error(db, operationId: operation.id) else { continue }
            _ = try settleByPolicy(db, RecordedConflict(operation: operation, error: error))
        }
    }

    /// Whether a conflict waits that its table's policy settles now (a collision under `merge` does
    /// not): then a sync pushes, though nothing else is queued.
    nonisolated func hasConflictsForTheirPolicy(_ db: Database) throws -> Bool {
        try conflictsForTheirPolicy(db).contains { operation in
            guard let conflict = try conflict(db, operation) else { return false }
            if case .ask = try conflictPolicy(db, for: operation.table).action(for: merge(of: conflict)) {
                return false
            }
            return true
        }
    }

    /// The conflicts (not held) of tables whose policy settles conflicts by itself.
    private nonisolated func conflictsForTheirPolicy(_ db: Database) throws -> [TableOperation] {
        try queue.all(db, in: .conflict).filter { operation in
            try operation.hold == nil && conflictPolicy(db, for: operation.table) != .ask
        }
    }

    /// Pushes one operation now, in a run of its own (Use Client, a per-field pick, an overturn): a
    /// conflict waits for a person, whatever the table's policy.
    func pushOne(_ id: Int64, driver: PushDriver) async throws(SyncError) -> OperationOutcome {
        let run = PushRun(
            [PushRun.Queued(id: id, item: "")], window: 1, applyingPolicy: false, retry: connectionRetry)
        let (result, error) = await runner(driver).run(run)
        if let error { throw error }
        return result.outcome(of: id) ?? .skipped
    }

    /// The driver of this context's pushes over `transport`: conflicts go to their table's policy.
    nonisolated func pushDriver(_ transport: HTTPTransport) -> PushDriver {
        PushDriver(queue: queue, transport: transport) { db, conflict in try self.settleByPolicy(db, conflict) }
    }

    /// The runner of this context's pushes: progress goes to the monitor.
    private func runner(_ driver: PushDriver) -> PushRunner {
        PushRunner(driver: driver) { [monitor] answered in monitor.update { $0.done = answered } }
    }

    /// The transport, or the reason there is none (offline mode, no address). With
    /// ``ProtocolChoice/auto`` and no protocol found out yet, the service is asked which one it speaks
    /// with one row of `table` (a push asks with the table of its first operation). A service that
    /// went back in time since the last sync is reconciled with first (``reconcileIfRestored(_:table:asking:)``).
    func readyTransport(_ kind: SyncSummary.Kind, table: String?) async throws(SyncError) -> HTTPTransport {
        do throws(SyncError) {
            if monitor.offline { throw .stopped(.offline) }
            guard let transport else { throw .noRemote }
            var ready = transport
            if let probeTable = try await probeTable(table) {
                ready = try await speakingTransport(transport, table: probeTable)
            }
            // A pull learns the epoch from its first page (``SyncError/serviceWentBack(_:)``); a push
            // must know it before it sends anything.
            try await reconcileIfRestored(ready, table: table, asking: kind == .push)
            return ready
        } catch {
            await recordLastSync(SyncSummary(kind, table: table, ended: error))
            throw error
        }
    }

    /// The table to ask which protocol the service speaks: `table`, else (a push) the table of the
    /// first queued operation — one the service has, unlike `todoitem` in an app without it. Nil
    /// when the protocol is known or nothing is queued.
    private func probeTable(_ table: String?) async throws(SyncError) -> String? {
        if let table { return table }
        guard tableProtocol == nil else { return nil }
        return try await store.asyncRead { [queue] db in try queue.firstSendableTable(db) }
    }
}

extension SyncSummary {
    /// The summary of a `kind` of sync that ended now with `error` (nil: ran to the end): a stop
    /// says why in ``stopReason``, another error in ``error``.
    init(
        _ kind: Kind, table: String? = nil, ended error: SyncError?, pushed: Int = 0, conflicts: Int = 0,
        failed: Int = 0, pulled: Int = 0
    ) {
        var stopReason: StopReason?
        if case .stopped(let reason)? = error { stopReason = reason }
        self.init(
            kind: kind, table: table, finishedAt: Date(), pushed: pushed, conflicts: conflicts, failed: failed,
            pulled: pulled, stopReason: stopReason, error: stopReason == nil ? error?.description : nil)
    }

    /// The summary of a push that ended with `error` (nil: ran to the end).
    init(push result: PushResult, error: SyncError?) {
        self.init(
            .push, ended: error, pushed: result.pushed.count, conflicts: result.conflicts.count,
            failed: result.failed.count)
    }
}
