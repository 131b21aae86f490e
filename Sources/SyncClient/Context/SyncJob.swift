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
