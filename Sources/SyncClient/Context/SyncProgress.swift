import Foundation

/// What the sync context is doing right now; cheap to read at any time (``SyncContext/progress``).
public struct SyncProgress: Sendable, Hashable, Codable {
    /// The running job.
    public enum Activity: String, Sendable, Codable {
        case idle, pushing, pulling, verifying
        /// Reading the tables again after the service went back in time (a restore).
        case reconciling
    }

    /// Idle, pushing or pulling.
    public var activity: Activity
    /// The table being pulled or verified.
    public var table: String?
    /// Operations pushed (answered), rows received or rows compared so far.
    public var done: Int
    /// Operations to push, or rows a pull expects when the service said (`$inlinecount`).
    public var total: Int?
    /// When the running job started.
    public var startedAt: Date?

    /// Nothing running.
    public static let idle = SyncProgress(activity: .idle, table: nil, done: 0, total: nil, startedAt: nil)

    /// "pushing 3/10", "pulling todoitem: 250 rows", "idle".
    public var summary: String {
        switch activity {
        case .idle: "idle"
        case .pushing: "pushing \(done)/\(total ?? done)"
        case .pulling:
            "pulling \(table ?? "")\(table == nil ? "" : ": ")\(done)\(total.map { " of \($0)" } ?? "") rows"
        case .verifying: "verifying \(table ?? ""): \(done)\(total.map { " of \($0)" } ?? "") rows"
        case .reconciling: "reconciling with the restored service: \(done) rows read"
        }
    }
}

/// The outcome of the last push or pull, kept in the store so it survives restarts.
public struct SyncSummary: Sendable, Hashable, Codable {
    /// Which job it was.
    public enum Kind: String, Sendable, Codable { case push, pull }

    /// Push or pull.
    public var kind: Kind
    /// The table pulled (pulls only).
    public var table: String?
    /// When it ended.
    public var finishedAt: Date
    /// Operations the server accepted.
    public var pushed: Int
    /// Operations that ended in conflict / conflicts waiting for a resolution.
    public var conflicts: Int
    /// Operations the server refused.
    public var failed: Int
    /// Rows received (pulls).
    public var pulled: Int
    /// Why it stopped early, nil when it ran to the end.
    public var stopReason: StopReason?
    /// Another error that ended it.
    public var error: String?

    /// "Pushed 4 changes, 1 conflict to resolve", "Pulled 250 rows into todoitem", or the reason it
    /// stopped: the push's and the pull's own wording (``PushResult/summary``, ``PullResult/summary``).
    public var message: String {
        if let stopReason { return stopReason.description }
        if let error { return error }
        switch kind {
        case .push: return PushResult.summary(pushed: pushed, conflicts: conflicts, failed: failed)
        case .pull: return PullResult.summary(received: pulled, table: table)
        }
    }
}

/// The counts a page header shows, read from the store in one query (``SyncContext/status()``).
public struct SyncStatus: Sendable, Hashable, Codable {
    /// Operations waiting to be pushed (pending, attempted, in flight; not held).
    public var pending: Int
    /// Operations that ended in conflict / conflicts waiting for a resolution.
    public var conflicts: Int
    /// Operations the server refused (not held).
    public var failed: Int
    /// Operations a person holds back from pushes (whatever their state underneath).
    public var held: Int = 0
    /// Every queued operation, whatever its state.
    public var operations: Int
    /// Whether offline mode is on.
    public var offline: Bool
    /// The remote service's address.
    public var remoteURL: String?
    /// The table protocol spoken with it; nil until `auto` has asked the service.
    public var tableProtocol: TableProtocol?
    /// What is running now.
    public var progress: SyncProgress
    /// The last push or pull.
    public var lastSync: SyncSummary?
    /// What the store did since the service's admin revoked its access; nil while it has access.
    public var revokedAccess: RevokedAccess? = nil
}
