import Foundation
import Logging
import SyncClient
import Synchronization

/// The dashboard's side of the context's ``JobSlot``: starts sync, push, pull and verify in the
/// background for a browser (or auto-sync), and turns each job's end into what the pages show.
///
/// A request starts the job and returns at once; a request while a job runs joins it (the slot
/// decides both). When the job ends, every browser that asked for it gets the result as a flash
/// message, and the metrics count it.
final class BackgroundSync: Sendable {
    enum Kind: String, Sendable {
        case sync, push, pull, verify

        /// The kind of `job`, as the dashboard names it; nil for a job it never starts.
        init?(_ job: SyncJob) {
            switch job {
            case .push: self = .push
            case .pull: self = .pull
            case .sync: self = .sync
            case .verify: self = .verify
            case .useClient, .overturn: return nil
            }
        }

        var verb: String {
            switch self {
            case .sync: "Sync"
            case .push: "Push"
            case .pull: "Pull"
            case .verify: "Verify"
            }
        }
    }

    private let context: SyncContext
    private let sessions: Sessions
    private let pageSize: @Sendable () -> Int
    private let metrics: DashboardMetrics
    /// True for an opened support bundle: ``start(_:session:automatic:)`` never starts anything.
    private let neverSyncs: Bool
    private let logger = Logger(label: "todosync.dashboard.sync")
    /// The flash message of each job that ended, until it is shown to those who asked (by serial).
    private let endings = Mutex<[Int: Flash]>([:])
    private let lastMessage = Mutex<Flash?>(nil)
    private let lastVerify = Mutex<VerifyOutcome?>(nil)
    /// What each remote did when last asked, by address, and the summary it was last told.
    private let contacts = Mutex<(byRemote: [String: RemoteState.Contact], told: SyncSummary?)>(([:], nil))

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
            contacts.withLock { $0 = ([remote: RemoteState.record(last, after: nil)], last) }
        }
        context.jobs.observe { [weak self] event in
            switch event {
            case .finished(let end): self?.finished(end)
            case .released(let serial, let requesters): self?.released(serial, requesters: requesters)
            case .started: break
            }
        }
    }

    /// The dashboard's record of its exchanges with `remote`; nil if it never asked it anything.
    func contact(with remote: String) -> RemoteState.Contact? {
        contacts.withLock { $0.byRemote[remote] }
    }

    /// Whether a job is running now.
    var isRunning: Bool { context.jobs.current != nil }

    /// The outcome of the last finished work, if any since start.
    var lastResult: Flash? { lastMessage.withLock { $0 } }

    /// What the last verify found, table by table, if one ran since start.
    var lastVerifyOutcome: VerifyOutcome? { lastVerify.withLock { $0 } }

    /// The kind of work running now, if the dashboard names it.
    var runningKind: Kind? { context.jobs.current.flatMap(Kind.init) }

    /// Starts `kind` for the browser `session` (nil: for nobody's page, as auto-sync does, then
    /// `automatic`); returns false when it joined work already running.
    @discardableResult
    func start(_ kind: Kind, session: String?, automatic: Bool = false) -> Bool {
        guard !neverSyncs else { return false }
        return context.start(job(kind), requester: session, automatic: automatic)
    }

    /// The job of `kind`: Pull pushes first when changes are pending, so Sync and Pull are both a
    /// push, then one pull per synced table with its own incremental pull (delta token).
    private func job(_ kind: Kind) -> SyncJob {
        switch kind {
        case .push: .push
        case .sync, .pull: .sync(queryId: Self.queryId, pageSize: pageSize())
        case .verify: .verify(table: nil, pageSize: 1000)
        }
    }

    /// Cancels the running work, if any: it stops within moments and its result says "Cancelled".
    /// Returns whether work was running.
    @discardableResult
    func cancel() async -> Bool {
        context.jobs.cancel()
    }

    /// Waits until no work runs (for tests and clean shutdown).
    func waitUntilIdle() async {
        await context.jobs.waitUntilIdle()
    }

    /// A job ended (it still holds the slot): its message, its metrics, the remote's record.
    private func finished(_ end: JobEnd) {
        let kind = Kind(end.job)
        let flash: Flash
        switch end.outcome {
        case .success(let outcome):
            record(outcome, of: end.job)
            flash = Flash(kind: Self.kind(of: outcome), message: outcome.sentence)
        case .failure(let error as SyncError):
            flash = Self.describe(error)
        case .failure(let error):
            logger.error("\(kind?.verb ?? "The job") failed: \(error)")
            flash = Flash(kind: .error, message: "\(kind?.verb ?? "The job") failed: \(error)")
        }
        // Verify only reads: it is no sync, push or pull (the `kind` label's vocabulary).
        if end.job.isSync, let kind {
            let outcome = end.error.map(DashboardMetrics.SyncOutcome.init) ?? .success
            metrics.recordSync(kind: kind, outcome: outcome, duration: end.duration)
        }
        if let remote = context.remoteURL, let last = context.lastSync {
            contacts.withLock { contacts in
                guard contacts.told != last else { return }
                contacts.byRemote[remote] = RemoteState.record(last, after: contacts.byRemote[remote])
                contacts.told = last
            }
        }
        if kind != nil { lastMessage.withLock { $0 = flash } }
        endings.withLock { $0[end.serial] = flash }
    }

    /// A job left the slot: those who asked for it see its message.
    private func released(_ serial: Int, requesters: Set<String>) {
        guard let flash = endings.withLock({ $0.removeValue(forKey: serial) }) else { return }
        for session in requesters { sessions.flash(session: session, flash) }
    }

    /// What the metrics and the Verify page keep of a job that ran to its end.
    private func record(_ outcome: JobOutcome, of job: SyncJob) {
        switch outcome {
        case .verified(let reports, let stopped):
            lastVerify.withLock { $0 = VerifyOutcome(reports: reports, stopped: stopped?.description) }
        case .pushed(let result):
            metrics.recordPush(result)
        case .synced(let result):
            if let pushed = result.pushed { metrics.recordPush(pushed) }
            for (table, pull) in result.pulled { metrics.recordPull(table: table, rows: pull.received) }
        case .pulled(let result):
            if case .pull(let table, _, _, _) = job { metrics.recordPull(table: table, rows: result.received) }
        case .decided:
            break
        }
    }

    /// How the flash of a job that ran to its end looks: a warning when something waits for a
    /// person (a conflict, a refusal, a missing table, a silent divergence).
    static func kind(of outcome: JobOutcome) -> Flash.Kind {
        switch outcome {
        case .pushed(let result): kind(of: result)
        case .pulled(let result): result.pushed.map(kind(of:)) ?? .success
        case .synced(let result):
            result.missingTables.isEmpty ? result.pushed.map(kind(of:)) ?? .success : .warning
        case .verified(let reports, let stopped):
            if let stopped { describe(stopped).kind } else { VerifyOutcome(reports: reports, stopped: nil).kind }
        case .decided: .success
        }
    }

    private static func kind(of push: PushResult) -> Flash.Kind {
        push.conflicts.isEmpty && push.failed.isEmpty ? .success : .warning
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

    /// How a verify's flash looks: success when this copy matches the service, a warning for a
    /// silent divergence, else information.
    var kind: Flash.Kind {
        if reports.allSatisfy({ $0.differences.isEmpty }) { return .success }
        return reports.allSatisfy({ $0.silentDivergences.isEmpty }) ? .info : .warning
    }
}
