import Foundation
import SyncProtocol

/// Runs the pushes of a context: the push job (the queue in order, several operations on the wire
/// at once) and the push of one operation now (Use Client, a per-field pick, an overturn). Progress
/// goes to the monitor; conflicts go to their table's policy.
struct Pusher: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    let monitor: SyncMonitor
    /// Readies the transport of each push.
    let gate: TransportGate
    /// Settles the conflicts a push meets, as their table's policy says.
    let settlement: ConflictSettlement
    /// How a push sends a request again after a dropped connection.
    let connectionRetry: ConnectionRetry

    /// The push job: sends the queued operations, `window` of them on the wire at once, after
    /// settling the conflicts their policy settles now. Returns what it pushed, and the error that
    /// stopped it before the end (nil: it ran to the end).
    func run(window: Int) async -> (result: PushResult, error: SyncError?) {
        do throws(SyncError) {
            let driver = pushDriver(try await gate.ready(for: .push))
            var (queued, waiting) = try await store.asyncRead { [queue, settlement] db in
                (try queue.sendable(db), try settlement.hasConflictsForTheirPolicy(db))
            }
            if waiting {
                queued = try await store.asyncWrite { [queue, settlement] db in
                    try settlement.settleWaitingConflicts(db)
                    return try queue.sendable(db)
                }
            }
            monitor.update {
                $0 = SyncProgress(activity: .pushing, table: nil, done: 0, total: queued.count, startedAt: Date())
            }
            defer { monitor.update { $0 = .idle } }
            let run = PushRun(
                queued.map { PushRun.Queued(id: $0.id, table: $0.table, itemId: $0.itemId) }, window: window,
                retry: connectionRetry)
            return await runner(driver).run(run)
        } catch {
            return (PushResult(), error)
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
    func pushDriver(_ transport: HTTPTransport) -> PushDriver {
        PushDriver(queue: queue, transport: transport) { [settlement] db, conflict in
            try settlement.settleByPolicy(db, conflict)
        }
    }

    /// The runner of this context's pushes: progress goes to the monitor.
    private func runner(_ driver: PushDriver) -> PushRunner {
        PushRunner(driver: driver) { [monitor] answered in monitor.update { $0.done = answered } }
    }

    /// Pushes a decision that sends local values (Use Client, a per-field pick) now: holds it with
    /// the operation, then sends that operation alone; the journal keeps it when the service accepts it.
    func pushDecision(_ operationId: Int64, _ decision: PendingDecision) async throws(SyncError) -> OperationOutcome {
        let driver = pushDriver(try await gate.ready(for: .push))
        try await settlement.holdDecision(operationId, decision)
        return try await pushOne(operationId, driver: driver)
    }
}
