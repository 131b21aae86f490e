/// The one job a ``SyncContext`` runs at a time, with its task typed by what it returns.
///
/// A caller asking for the job that runs (same kind, same arguments) shares its result; any other
/// job waits until it has finished.
enum SyncJob: Sendable {
    /// ``SyncContext/push()``.
    case push(Task<PushResult, any Error>)
    /// ``SyncContext/pull(_:query:queryId:settings:)`` of one table and query.
    case pull(PullJob, Task<PullResult, any Error>)
    /// ``SyncContext/useClient(_:)`` of one operation.
    case useClient(operationId: Int64, Task<OperationOutcome, any Error>)
    /// ``SyncContext/overturn(_:batch:)`` of one journal entry.
    case overturn(entryId: String, Task<OperationOutcome, any Error>)
    /// ``SyncContext/verify(_:pageSize:)`` of one table.
    case verify(table: String, Task<VerifyReport, any Error>)

    /// What identifies a pull: a second pull with the same arguments joins the running one.
    struct PullJob: Hashable, Sendable {
        var table: String
        var queryId: String?
        var filter: String?
        var pageSize: Int
    }

    /// Asks the job to stop; it ends with ``StopReason/cancelled``.
    func cancel() {
        switch self {
        case .push(let task): task.cancel()
        case .pull(_, let task): task.cancel()
        case .useClient(_, let task): task.cancel()
        case .overturn(_, let task): task.cancel()
        case .verify(_, let task): task.cancel()
        }
    }

    /// Waits until the job has ended, however it ended.
    func finished() async {
        switch self {
        case .push(let task): _ = await task.result
        case .pull(_, let task): _ = await task.result
        case .useClient(_, let task): _ = await task.result
        case .overturn(_, let task): _ = await task.result
        case .verify(_, let task): _ = await task.result
        }
    }

    /// The task of a running push.
    var push: Task<PushResult, any Error>? {
        if case .push(let task) = self { task } else { nil }
    }

    /// The task of a running pull with these arguments.
    func pull(_ job: PullJob) -> Task<PullResult, any Error>? {
        if case .pull(job, let task) = self { task } else { nil }
    }

    /// The task of a running Use Client of this operation.
    func useClient(_ operationId: Int64) -> Task<OperationOutcome, any Error>? {
        if case .useClient(operationId, let task) = self { task } else { nil }
    }

    /// The task of a running overturn of this journal entry.
    func overturn(_ entryId: String) -> Task<OperationOutcome, any Error>? {
        if case .overturn(entryId, let task) = self { task } else { nil }
    }

    /// The task of a running verify of this table.
    func verify(_ table: String) -> Task<VerifyReport, any Error>? {
        if case .verify(table, let task) = self { task } else { nil }
    }
}
