/// What ``SyncContext/sync(queryId:settings:)`` did: the push, then each synced table's pull.
public struct SyncRunResult: Sendable {
    /// One synced table's pull in a sync, in the order the sync went through them.
    enum TablePull: Sendable {
        /// The table was pulled to the end.
        case pulled(String, PullResult)
        /// The service has no such table (404): not a failure of the others.
        case missing(String)
        /// The pull the sync stopped in, with what it received before (only in a sync that stopped,
        /// and last).
        case stopped(String, PullResult)
    }

    /// The push, when changes were pending.
    public var pushed: PushResult?
    /// Each synced table's pull, in the order pulled.
    var pulls: [TablePull] = []

    public init() {}

    /// Each table pulled to the end, in the order pulled.
    public var pulled: [(table: String, result: PullResult)] {
        pulls.compactMap { pull in
            guard case .pulled(let table, let result) = pull else { return nil }
            return (table, result)
        }
    }

    /// Synced tables the service does not have (404): not a failure of the others.
    public var missingTables: [String] {
        pulls.compactMap { pull in
            guard case .missing(let table) = pull else { return nil }
            return table
        }
    }
}
