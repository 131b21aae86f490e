import Synchronization

/// The one job a ``SyncContext`` runs at a time (a push, a pull, a sync, verify, Use Client, an
/// overturn), and what its observers are told of it.
///
/// - A caller asking for the job that runs (an equal ``SyncJob``) shares its outcome; a caller asking
///   for another waits until it has ended (``run(_:_:)``), or joins it (``start(_:requester:automatic:_:)``).
/// - When the job ends, however it ends, the slot keeps its summary as the last sync
///   (``SyncSummary/init(_:_:)``: the one place the last sync is recorded), then the context settles
///   what the end says of the store's access (``RevocationSettlement/settle(after:_:)``) and the job's
///   exchanges go to the flight recorder.
/// - Observers hear, in order: the job ``JobEvent/started(_:)``, its ``JobEvent/finished(_:)`` while it
///   still holds the slot, and ``JobEvent/released(_:requesters:)`` once another job may start.
public final class JobSlot: Sendable {
    private struct Running {
        var job: SyncJob
        var serial: Int
        var task: Task<JobOutcome, any Error>
        /// Who asked to be told of the job's end (browser sessions, for the dashboard).
        var requesters: Set<String>
    }

    private struct State {
        var running: Running?
        var serial = 0
        var observers: [@Sendable (JobEvent) -> Void] = []
    }

    private let state = Mutex(State())
    /// Keeps the summary of a job that ended as the last sync, before observers hear of the end.
    private let recordLastSync: @Sendable (SyncSummary) async -> Void
    /// Run when a job ends, after its summary is kept and before observers hear of it (the access
    /// settled, the flight recorder flushed); it may end the job otherwise (a settlement that failed).
    private let ending: @Sendable (SyncJob, JobEnding) async -> JobEnding

    init(
        recordLastSync: @escaping @Sendable (SyncSummary) async -> Void,
        ending: @escaping @Sendable (SyncJob, JobEnding) async -> JobEnding
    ) {
        self.recordLastSync = recordLastSync
        self.ending = ending
    }

    /// The job running now, if any.
    public var current: SyncJob? { state.withLock { $0.running?.job } }

    /// Tells `observer` of every job from now on (see ``JobEvent``).
    public func observe(_ observer: @escaping @Sendable (JobEvent) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Cancels the running job, if any: it stops within moments with ``StopReason/cancelled``, each
    /// operation left as after a lost answer. Returns whether a job ran.
    @discardableResult
    public func cancel() -> Bool {
        guard let task = state.withLock({ $0.running?.task }) else { return false }
        task.cancel()
        return true
    }

    /// Waits until no job runs.
    public func waitUntilIdle() async { await waitUntilIdle(cancelling: false) }

    /// Cancels the running job, if any, and waits until no job runs.
    func stopRunningJob() async { await waitUntilIdle(cancelling: true) }

    private func waitUntilIdle(cancelling: Bool) async {
        while let task = state.withLock({ $0.running?.task }) {
            if cancelling { task.cancel() }
            _ = await task.result
        }
    }

    /// Runs `body` as `job` once no other job runs; a caller asking for the job that runs shares its
    /// outcome instead. Cancelling the caller that started the job cancels the job.
    func run(
        _ job: SyncJob, _ body: @escaping @Sendable () async -> JobEnding
    ) async throws -> JobOutcome {
        while true {
            enum Next {
                case join(Task<JobOutcome, any Error>)
                case wait(Task<JobOutcome, any Error>)
                case started(Task<JobOutcome, any Error>)
            }
            let next = state.withLock { state -> Next in
                if let running = state.running {
                    return running.job == job ? .join(running.task) : .wait(running.task)
                }
                return .started(begin(job, requester: nil, automatic: false, body, in: &state))
            }
            switch next {
            case .join(let task):
                return try await task.value
            case .wait(let task):
                _ = await task.result
            case .started(let task):
                return try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: {
                    task.cancel()
                }
            }
        }
    }

    /// Starts `body` as `job` now, unless a job runs: then `requester` is told of that job's end
    /// instead (``JobEvent/released(_:requesters:)``). Returns whether it started.
    func start(
        _ job: SyncJob, requester: String?, automatic: Bool,
        _ body: @escaping @Sendable () async -> JobEnding
    ) -> Bool {
        state.withLock { state in
            if state.running != nil {
                if let requester { state.running?.requesters.insert(requester) }
                return false
            }
            _ = begin(job, requester: requester, automatic: automatic, body, in: &state)
            return true
        }
    }

    /// Makes `body`'s task the running job (under the lock).
    private func begin(
        _ job: SyncJob, requester: String?, automatic: Bool,
        _ body: @escaping @Sendable () async -> JobEnding, in state: inout State
    ) -> Task<JobOutcome, any Error> {
        state.serial += 1
        let serial = state.serial
        // The task waits for the lock before it tells anyone, so `running` is set when it does.
        let task = Task { [self] () async throws -> JobOutcome in
            tell(.started(JobStart(job: job, serial: serial, automatic: automatic)))
            let started = ContinuousClock.now
            let ended = await body()
            if let summary = SyncSummary(job, ended) { await recordLastSync(summary) }
            let outcome = await ending(job, ended).result
            tell(
                .finished(
                    JobEnd(
                        job: job, serial: serial, automatic: automatic, outcome: outcome,
                        duration: ContinuousClock.now - started)))
            let requesters = self.state.withLock { state -> Set<String> in
                guard state.running?.serial == serial else { return [] }
                defer { state.running = nil }
                return state.running?.requesters ?? []
            }
            tell(.released(serial, requesters: requesters))
            return try outcome.get()
        }
        state.running = Running(job: job, serial: serial, task: task, requesters: requester.map { [$0] } ?? [])
        return task
    }

    private func tell(_ event: JobEvent) {
        for observer in state.withLock({ $0.observers }) { observer(event) }
    }
}

/// What a ``JobSlot``'s observers hear.
public enum JobEvent: Sendable {
    /// A job started.
    case started(JobStart)
    /// A job ended; it still holds the slot, so an observer hears of this end before the next start.
    case finished(JobEnd)
    /// The job with this serial number left the slot: another may start. `requesters` asked (while it
    /// ran) to be told of its end.
    case released(Int, requesters: Set<String>)
}

/// A job that started.
public struct JobStart: Sendable {
    public var job: SyncJob
    /// Numbers the context's jobs from 1, in the order they started.
    public var serial: Int
    /// Started by auto-sync rather than by a person.
    public var automatic: Bool
}

/// A job that ended.
public struct JobEnd: Sendable {
    public var job: SyncJob
    public var serial: Int
    public var automatic: Bool
    public var outcome: Result<JobOutcome, any Error>
    public var duration: Duration

    /// The error that ended the job, as a ``SyncError``; nil when it succeeded.
    public var error: SyncError? {
        guard case .failure(let error) = outcome else { return nil }
        return error as? SyncError ?? .badResponse(String(describing: error))
    }
}
