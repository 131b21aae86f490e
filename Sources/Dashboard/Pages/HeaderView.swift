import Foundation
import SyncClient

/// The header of every page and the answer of `GET /api/status`: the remote, what the dashboard
/// knows about it, the queue's counts and the running sync's progress.
///
/// It is the one description of the header: the page renders it, the API encodes it and the
/// page's script reads the same names, so the live header and the page cannot disagree.
struct HeaderView: Encodable, Sendable, Equatable {
    /// The remote's address, or empty when none is set.
    var remote: String
    /// The address without its scheme (`127.0.0.1:8090`).
    var remoteLabel: String
    /// The remote's state as a CSS-friendly word (see ``RemoteState``).
    var state: String
    /// The state in words: "Not contacted yet", "Reachable (last contact 10:02:03 UTC)", …
    var stateLabel: String
    /// Changes waiting to be pushed (pending, retrying or on the wire).
    var pending: Int
    var hasPending: Bool
    /// Changes in conflict, waiting for a person's choice.
    var conflicts: Int
    var hasConflicts: Bool
    /// "conflict" or "conflicts".
    var conflictsWord: String
    /// Changes the service refused (they stay queued until retried or discarded).
    var refused: Int
    var hasRefused: Bool
    /// Whether a sync, push or pull runs now.
    var running: Bool
    /// "Pushing 3/10…", "Pulling 250 of 1,000 rows…", or empty.
    var progress: String
    /// Whether offline mode is on.
    var offline: Bool
    /// The embedded service's own page, when there is one.
    var servicePage: String?
    /// The outcome of the last sync, push or pull in words.
    var lastResult: String?
    /// The table protocol spoken with the remote ("v2", "v3"); nil until `auto` has asked it.
    var tableProtocol: String?
    /// Auto-sync: whether it is on, its interval, the next attempt, failures in a row and the last
    /// error (nil in an opened support bundle).
    var autoSync: AutoSyncStatus?
    /// "next try in 40 s" beside Sync (empty when auto-sync is off).
    var autoSyncLabel: String
    /// "Live", "Polling every 30 s" or "Offline"; nil when auto-sync is off (see ``followLabel(_:)``).
    var followLabel: String?
    /// "The service went back to …: 3 of your rows are not on it" while conflicts of a restore of
    /// the service wait for a decision (see ``restoreMessage(_:gone:older:)``); nil otherwise.
    var restoreMessage: String?
    /// What this store did since its access was revoked (``RevokedAccess/summary``); nil while it has access.
    var revokedMessage: String?

    init(
        remote: String, state: RemoteState, counts: SyncStatus?, running: Bool, progress: SyncProgress,
        offline: Bool, servicePage: String?, lastResult: String?, autoSync: AutoSyncStatus? = nil
    ) {
        self.autoSync = autoSync
        autoSyncLabel = running ? "" : autoSync?.label ?? ""
        followLabel = Self.followLabel(autoSync)
        self.remote = remote
        remoteLabel = Self.shortLabel(remote)
        self.state = state.word
        stateLabel = state.label
        pending = counts?.pending ?? 0
        hasPending = pending > 0
        conflicts = counts?.conflicts ?? 0
        hasConflicts = conflicts > 0
        conflictsWord = conflicts == 1 ? "conflict" : "conflicts"
        refused = counts?.failed ?? 0
        hasRefused = refused > 0
        revokedMessage = counts?.revokedAccess?.summary
        self.running = running
        self.progress = Self.progressText(progress, running: running)
        self.offline = offline
        self.servicePage = servicePage
        self.lastResult = lastResult
        tableProtocol = counts?.tableProtocol?.rawValue
    }

    /// The banner's words for a restore of the service whose conflicts still wait: nil when none does.
    static func restoreMessage(_ notice: RestoreNotice?, gone: Int, older: Int) -> String? {
        guard let notice, gone + older > 0 else { return nil }
        let when = notice.restoredTo.map { "to " + Display.date($0) } ?? "to an earlier state"
        var parts: [String] = []
        if gone > 0 { parts.append("\(gone) of your \(gone == 1 ? "rows is" : "rows are") not on it") }
        if older > 0 { parts.append("\(older) \(older == 1 ? "row holds" : "rows hold") older values there") }
        return "The service went back \(when): " + parts.joined(separator: ", and ") + "."
    }

    /// Reads counts and state; never waits for a running sync.
    static func read(
        context: SyncContext, sync: BackgroundSync, autoSync: AutoSyncStatus?, servicePage: String?
    ) -> HeaderView {
        let remote = context.remoteURL ?? ""
        let running = sync.isRunning
        let state = RemoteState.decide(
            offline: context.isOffline, remote: remote, running: running, contact: sync.contact(with: remote))
        var header = HeaderView(
            remote: remote, state: state, counts: try? context.status(), running: running,
            progress: context.progress, offline: context.isOffline, servicePage: servicePage,
            lastResult: sync.lastResult?.message, autoSync: autoSync)
        if let notice = try? context.restoreNotice(), let counts = try? context.restoreConflictCounts() {
            header.restoreMessage = restoreMessage(notice, gone: counts.gone, older: counts.older)
        }
        return header
    }

    /// "Pushing 3/10…", "Pulling 250 of 1,000 rows…" (with the service's total when it gave one).
    static func progressText(_ progress: SyncProgress, running: Bool) -> String {
        switch progress.activity {
        case .idle: running ? "Starting…" : ""
        case .pushing: "Pushing \(progress.done)/\(progress.total ?? progress.done)…"
        case .pulling:
            if let total = progress.total {
                "Pulling \(progress.done.formatted()) of \(total.formatted()) rows…"
            } else {
                "Pulling: \(progress.done.formatted()) rows…"
            }
        case .verifying:
            "Verifying \(progress.table ?? ""): \(progress.done.formatted())"
                + (progress.total.map { " of \($0.formatted())" } ?? "") + " rows…"
        case .reconciling: "The service went back in time: reconciling, \(progress.done.formatted()) rows read…"
        }
    }

    /// `http://127.0.0.1:8090/` → `127.0.0.1:8090`.
    static func shortLabel(_ url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host else { return url }
        return parsed.port.map { "\(host):\($0)" } ?? host
    }
}
