import Foundation
import Logging
import SyncClient
import Synchronization

/// Runs sync, push, pull and verify in the background, one at a time.
///
/// A request starts the work and returns at once; a second request while it runs joins it. When
/// the work ends, every browser that asked for it gets the result as a flash message.
final class BackgroundSync: Sendable {
    enum Kind: String, Sendable {
        case sync, push, pull, verify

        var verb: String {
            switch self {
            case .sync: "Sync"
            case .push: "Push"
            case .pull: "Pull"
            case .verify: "Verify"
            }
        }
    }

    private struct Running {
        var kind: Kind
        var sessions: Set<String>
        var task: Task<Void, Never>?
    }

    /// What an observer (auto-sync) hears: a sync, push or pull started (by auto-sync, or by a
    /// person), or ended (with its error; nil for a success). Verify is not told: it only reads.
    /// After any work, a verify too, it hears that none runs any more.
    enum Event: Sendable {
        case started(automatic: Bool)
        case finished(SyncError?)
        /// The work ended and no work runs: ``start(_:session:automatic:)`` starts the next.
        case idle
    }

    private let context: SyncContext
    private let sessions: Sessions
    private let pageSize: @Sendable () -> Int
    private let metrics: DashboardMetrics
    /// True for an opened support bundle: ``start(_:session:)`` never starts anything.
    private let neverSyncs: Bool
    private let logger = Logger(label: "todosync.dashboard.sync")
    private let running = Mutex<Running?>(nil)
    private let lastMessage = Mutex<Flash?>(nil)
    private let lastVerify = Mutex<VerifyOutcome?>(nil)
    private let observers = Mutex<[@Sendable (Event) -> Void]>([])
    /// What each remote did when last asked, by address.
    private let contacts = Mutex<[String: RemoteState.Contact]>([:])

    /// The table the dashboard pulls when none are set (see ``SyncContext/syncedTables()``), and the
    /// query id of each table's incremental pull.
    static let table = "todoitem"
    static let queryId = "dashboard"

    init(
        context: SyncContext, sessions: Sessions, metrics: DashboardMetrics, neverSyncs: Bool = false,
        pageSize: @escaping @Sendable () -> Int
    ) {
        self.neverSyncs = neverSyncs
        self.context = context
        self.sessions = sessions
        self.metrics = metrics
        self.pageSize = pageSize
        // The store's last result belongs to the remote it was opened with.
        if let remote = context.remoteURL, let last = context.lastSync {
            contacts.withLock { $0[remote] = RemoteState.record(last, after: nil) }
        }
    }

    /// The dashboard's record of its exchanges with `remote`; nil if it never asked it anything.
    func contact(with remote: String) -> RemoteState.Contact? {
        contacts.withLock { $0[remote] }
    }

    /// Whether work is running now.
    var isRunning: Bool { running.withLock { $0 != nil } }

    /// The outcome of the last finished work, if any since start.
    var lastResult: Flash? { lastMessage.withLock { $0 } }

    /// What the last verify found, table by table, if one ran since start.
    var lastVerifyOutcome: VerifyOutcome? { lastVerify.withLock { $0 } }

    /// The kind of work running now, if any.
    var runningKind: Kind? { running.withLock { $0?.kind } }

    /// Tells `observer` of every sync, push and pull from now on (see ``Event``).
    func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func tell(_ event: Event) {
        for observer in observers.withLock({ $0 }) { observer(event) }
    }

    /// Starts `kind` for the browser `session` (nil: for nobody's page, as auto-sync does, then
    /// `automatic`); returns false when it joined work already running.
    @discardableResult
    func start(_ kind: Kind, session: String?, automatic: Bool = false) -> Bool {
        guard !neverSyncs else { return false }
        let started = running.withLock { current -> Bool in
            if current != nil {
                if let session { current?.sessions.insert(session) }
                return false
            }
            current = Running(kind: kind, sessions: session.map { [$0] } ?? [])
            // Under the lock: the task clears `current` when it ends, which waits for this.
            current?.task = Task { await self.run(kind, automatic: automatic) }
            return true
        }
        return started
    }

    /// Cancels the running work, if any: it stops within moments and its result says "Cancelled".
    /// Returns whether work was running.
    @discardableResult
    func cancel() async -> Bool {
        guard isRunning else { return false }
        await context.cancelSync()
        return true
    }

    /// Waits until no work runs (for tests and clean shutdown).
    func waitUntilIdle() async {
        while let task = running.withLock({ $0?.task }) { await task.value }
    }

    private func run(_ kind: Kind, automatic: Bool) async {
        // Told here, so that an observer hears of the start before the end.
        if kind != .verify { tell(.started(automatic: automatic)) }
        let before = context.lastSync
        let started = ContinuousClock.now
        let (outcome, result, error) = await perform(kind)
        // Verify only reads: it is no sync, push or pull (the `kind` label's vocabulary).
        if kind != .verify { metrics.recordSync(kind: kind, outcome: result, duration: ContinuousClock.now - started) }
        if let remote = context.remoteURL, let last = context.lastSync, last != before {
            contacts.withLock { $0[remote] = RemoteState.record(last, after: $0[remote]) }
        }
        lastMessage.withLock { $0 = outcome }
        // Before the work is over for everyone: an observer hears of this end before the next start.
        if kind != .verify { tell(.finished(error)) }
        let waiting = running.withLock { current -> Set<String> in
            defer { current = nil }
            return current?.sessions ?? []
        }
        // After `current` is cleared: an observer told of it can start work.
        tell(.idle)
        for session in waiting { sessions.flash(session: session, outcome) }
    }

    private func perform(_ kind: Kind) async -> (Flash, DashboardMetrics.SyncOutcome, SyncError?) {
        do {
            switch kind {
            case .verify:
                return (try await verify(), .success, nil)
            case .push:
                let result = try await context.push()
                metrics.recordPush(result)
                return (Self.describe(push: result), .success, nil)
            case .pull, .sync:
                // Pull pushes first when changes are pending, so Sync is one pull per synced table,
                // each with its own incremental pull (delta token).
                var parts: [String] = []
                var kind = Flash.Kind.success
                var received = 0
                let tables = (try? context.syncedTables()) ?? [Self.table]
                var missing: [String] = []
                for table in tables {
                    let pull: PullResult
                    do {
                        pull = try await context.pull(
                            table, queryId: Self.queryId, settings: PullSettings(pageSize: pageSize()))
                    } catch SyncError.serviceHasNoTable(let name) {
                        // Not a failure of the others: that service has no such table (yet).
                        missing.append(name)
                        continue
                    }
                    metrics.recordPull(table: table, rows: pull.received)
                    if let pushed = pull.pushed {
                        metrics.recordPush(pushed)
                        let push = Self.describe(push: pushed)
                        parts.append(push.message)
                        if push.kind != .success { kind = push.kind }
                    }
                    received += pull.received
                }
                let pulledTables = tables.count - missing.count
                let from = pulledTables == 1 ? "" : " from \(pulledTables) tables"
                parts.append("pulled \(received) row\(received == 1 ? "" : "s")\(from)")
                if !missing.isEmpty {
                    parts.append(
                        "the service has no table " + missing.map { "“\($0)”" }.joined(separator: ", ")
                            + " (check Settings → Tables)")
                    kind = .warning
                }
                let text = parts.joined(separator: "; ")
                return (
                    Flash(kind: kind, message: text.prefix(1).uppercased() + text.dropFirst() + "."), .success, nil
                )
            }
        } catch let error as SyncError {
            return (Self.describe(error), DashboardMetrics.SyncOutcome(error), error)
        } catch {
            logger.error("\(kind.verb) failed: \(error)")
            return (
                Flash(kind: .error, message: "\(kind.verb) failed: \(error)"), .failure,
                .badResponse(String(describing: error))
            )
        }
    }

    /// Verifies every synced table, keeping the reports for the Verify page (those of the tables
    /// done when it stopped too).
    private func verify() async throws -> Flash {
        var outcome = VerifyOutcome(reports: [], stopped: nil)
        defer { lastVerify.withLock { $0 = outcome } }
        for table in (try? context.syncedTables()) ?? [Self.table] {
            do {
                outcome.reports.append(try await context.verify(table))
            } catch let error as SyncError {
                outcome.stopped = error.description
                throw error
            }
        }
        return outcome.flash
    }

    static func describe(push result: PushResult) -> Flash {
        var text = "Pushed \(result.pushed.count) change\(result.pushed.count == 1 ? "" : "s")"
        if !result.conflicts.isEmpty {
            text += ", \(result.conflicts.count) conflict\(result.conflicts.count == 1 ? "" : "s") to resolve"
        }
        if !result.failed.isEmpty { text += ", \(result.failed.count) refused by the server" }
        if !result.resolved.isEmpty { text += ", \(result.resolved.count) settled by the server's value" }
        let kind: Flash.Kind = result.conflicts.isEmpty && result.failed.isEmpty ? .success : .warning
        return Flash(kind: kind, message: text)
    }

    static func describe(_ error: SyncError) -> Flash {
        switch error {
        case .stopped(.offline), .stopped(.cancelled): Flash(kind: .info, message: error.description)
        default: Flash(kind: .error, message: error.description)
        }
    }
}

/// What the dashboard's last verify found: a report per table it compared, and why it stopped
/// early, if it did.
struct VerifyOutcome: Sendable, Encodable {
    var reports: [VerifyReport]
    var stopped: String?

    /// "Verified todoitem and orders: 2 rows differ, 1 with no reason (a silent divergence)."
    var flash: Flash {
        let differing = reports.reduce(0) { $0 + $1.differences.count }
        let silent = reports.reduce(0) { $0 + $1.silentDivergences.count }
        let tables = reports.map(\.table).joined(separator: ", ")
        if differing == 0 {
            return Flash(kind: .success, message: "Verified \(tables): this copy matches the service.")
        }
        let rows = differing == 1 ? "1 row differs" : "\(differing.formatted()) rows differ"
        if silent == 0 {
            return Flash(kind: .info, message: "Verified \(tables): \(rows), each with a reason. See Verify.")
        }
        return Flash(
            kind: .warning,
            message:
                "Verified \(tables): \(rows), \(silent.formatted()) with no reason (a silent divergence). See Verify.")
    }
}
