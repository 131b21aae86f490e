/// A job a ``SyncContext`` runs in its ``JobSlot``; two equal jobs asked for while one runs share
/// one run and its outcome.
public enum SyncJob: Hashable, Sendable {
    /// ``SyncContext/push()``.
    case push
    /// ``SyncContext/pull(_:query:queryId:settings:)`` of one table and query.
    case pull(table: String, query: TableQuery?, queryId: String?, settings: PullSettings)
    /// ``SyncContext/sync(queryId:settings:)``: a push, then a pull of every synced table.
    case sync(queryId: String, pageSize: Int)
    /// ``SyncContext/verify(_:pageSize:)`` of one table, or of every synced table (nil).
    case verify(table: String?, pageSize: Int)
    /// ``Conflicts/useClient(_:batch:)`` (or a per-field pick) of one operation; started
    /// by itself, a person's Use Client.
    case useClient(operationId: Int64)
    /// ``SyncContext/overturn(_:batch:)`` of one journal entry; started by itself, with no batch.
    case overturn(entryId: String)

    /// Whether the job exchanges changes with the service (a push, a pull, a sync), as opposed to
    /// reading it (verify) or settling one operation.
    public var isSync: Bool {
        switch self {
        case .push, .pull, .sync: true
        case .verify, .useClient, .overturn: false
        }
    }
}

/// What a job came to, by kind.
public enum JobOutcome: Sendable {
    case pushed(PushResult)
    case pulled(PullResult)
    case synced(SyncRunResult)
    /// The reports of the tables verified before the job ended, and what stopped it early, if anything.
    case verified([VerifyReport], stopped: SyncError?)
    case decided(OperationOutcome)
}

/// What ``SyncContext/sync(queryId:settings:)`` did: the push, then each synced table's pull.
public struct SyncRunResult: Sendable {
    /// The push, when changes were pending.
    public var pushed: PushResult?
    /// Each table's pull, in the order pulled.
    public var pulled: [(table: String, result: PullResult)] = []
    /// Synced tables the service does not have (404): not a failure of the others.
    public var missingTables: [String] = []

    public init() {}
}
