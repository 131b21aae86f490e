/// One push run as a state machine: which operations to begin, send and store next, and when the run
/// ends. Pure: no store, no network, no clock. ``PushRunner`` performs the ``Action``s it returns and
/// feeds back what came of them, one event at a time.
///
/// - Up to ``window`` operations are on the wire at once; with a window of 1 they go strictly in
///   queue order. Operations of one item never overlap: an item is busy from the transaction that
///   begins its operation until the one that stores its answer (or until it is otherwise settled),
///   since the next operation's body and `If-Match` come from that answer.
/// - Attempts are begun, and answers stored, in batches: one transaction stores the answers
///   received so far, records the conflicts met (each settled by its table's policy in it) and begins
///   the next attempts, while other requests are on the wire. At most one such transaction runs at a
///   time.
/// - A request whose connection dropped is sent again after a pause (``ConnectionRetry``), a few
///   times, while the others go on; its item stays busy meanwhile. Begun again, its attempt carries
///   the body sent before, so that the service's answer shows whether the first one was applied.
/// - The first failure that stops the push (a request that cannot succeed now, a dropped connection
///   with no retries left, a failed transaction) drains the run: nothing new is sent, the requests
///   on the wire are answered and their answers stored, and the attempts not sent are put back. A
///   cancel drains too, but cancels the requests on the wire.
///
/// ```swift
/// var run = PushRun([.init(id: 1, item: "todoitem\u{0}a")], window: 16)
/// var actions = run.start()   // [.commit(store: [], record: [], begin: [1])]
/// actions = run.committed(.init(begun: [attempt]))   // [.send(attempt, applyingPolicy: true)]
/// actions = run.answered(1, .applied(answer))   // [.commit(store: [answer], record: [], begin: [])]
/// actions = run.committed(.init())   // [.finish(store: [], record: [], release: [], error: nil)]
/// ```
/// A dropped connection: `run.requestFailed(1, .stopped(.connectionLost(…)))` asks for
/// `[.resend(1, after: .milliseconds(50))]`; `run.resendDue(1)` begins operation 1 again.
struct PushRun: Sendable {
    /// An operation to push, with the item it changes (table and id, as one key).
    struct Queued: Sendable, Hashable {
        var id: Int64
        var item: String

        init(id: Int64, item: String) {
            self.id = id
            self.item = item
        }

        init(id: Int64, table: String, itemId: String) {
            self.init(id: id, item: table + "\u{0}" + itemId)
        }
    }

    /// What became of a request.
    enum Answer: Sendable, Equatable {
        /// The service applied the operation; its answer waits to be stored.
        case applied(PushDriver.AppliedAnswer)
        /// The service holds another version, or none; the conflict waits to be recorded (and given
        /// to its table's policy).
        case conflicted(PushDriver.ConflictAnswer)
        /// The outcome is in the queue already (refused, or no longer to be sent).
        case settled(OperationOutcome)
    }

    /// What a transaction made of a conflict it recorded.
    enum Decision: Sendable, Equatable {
        /// In conflict (waiting for a person), or settled by the server's version.
        case settled(OperationOutcome)
        /// Its policy adopted the server's version under the local or merged values (Use Client, a
        /// merge): the same transaction began the operation again, and this attempt goes out first.
        case resend(PushAttempt)
    }

    /// What the runner is asked to do.
    enum Action: Sendable, Equatable {
        /// Send a begun attempt; `applyingPolicy`: a conflict goes to its table's conflict policy.
        case send(PushAttempt, applyingPolicy: Bool)
        /// One transaction: store these answers, record these conflicts, then begin the attempts of
        /// these operations.
        case commit(store: [PushDriver.AppliedAnswer], record: [PushDriver.ConflictAnswer], begin: [Int64])
        /// Cancel every request on the wire and every pause: the run was cancelled.
        case cancelRequests
        /// Wait `pause`, then report ``Event/resendDue(_:)``: the operation's connection dropped.
        case resend(Int64, after: Duration)
        /// The run is over: store the answers and record the conflicts left, put back the attempts not
        /// sent, and end with `error` (nil: every operation was settled).
        case finish(
            store: [PushDriver.AppliedAnswer], record: [PushDriver.ConflictAnswer], release: [PushAttempt],
            error: SyncError?)
    }

    /// Where the run is.
    enum State: Sendable {
        /// Not started: every operation waits.
        case idle(Pipeline)
        /// Operations are begun, sent and stored.
        case running(Pipeline)
        /// The run must end with `error`: waiting for the requests and the transaction still out.
        case draining(Pipeline, error: SyncError)
        /// Finished; nothing more happens.
        case finished
    }

    /// The operations of a run, by stage.
    struct Pipeline: Sendable {
        /// Not begun yet, in queue order, from ``next`` on.
        var waiting: [Queued]
        /// The first of ``waiting`` not considered yet.
        var next = 0
        /// Passed over because their item was busy, in queue order: considered first.
        var passed: [Queued] = []
        /// Begun, not sent yet, in the order to send them.
        var ready: [PushAttempt] = []
        /// On the wire.
        var inFlight: Set<Int64> = []
        /// Applied by the service, not stored yet.
        var received: [PushDriver.AppliedAnswer] = []
        /// In conflict with the service, not recorded yet (their items stay busy until then).
        var conflicts: [PushDriver.ConflictAnswer] = []
        /// The transaction running now: the answers it stores, the conflicts it records and the
        /// operations it begins.
        var committing: (stored: [Int64], recorded: [Int64], begun: [Int64])?
        /// The item of each operation between its begin and its settling.
        var items: [Int64: String] = [:]
        /// Busy items, each with the operation that holds it (from its begin until it is settled, or
        /// until the transaction that stores its answer, which may begin the item's next operation).
        var busy: [String: Int64] = [:]
        /// Operations whose conflict went to the policy once in this run (a second one waits for a person).
        var policyApplied: Set<Int64> = []
        /// Operations whose connection dropped, waiting to be begun again (their items stay busy).
        var pausing: [Int64: Queued] = [:]
        /// Dropped connections so far, by operation.
        var failures: [Int64: Int] = [:]
        /// Operations begun again after a dropped connection: sent before the other ready ones.
        var resending: Set<Int64> = []

        /// Nothing left anywhere.
        var isEmpty: Bool {
            !hasWaiting && ready.isEmpty && inFlight.isEmpty && received.isEmpty
                && conflicts.isEmpty && committing == nil && pausing.isEmpty
        }

        /// Whether operations wait to begin.
        var hasWaiting: Bool { next < waiting.count || !passed.isEmpty }

        /// Whether a conflict is not decided yet: with a window of 1, nothing overtakes it, since its
        /// policy may send it again.
        var deciding: Bool { !conflicts.isEmpty || committing?.recorded.isEmpty == false }

        /// The operation is settled: its item may take its next operation.
        mutating func settle(_ id: Int64) {
            if let item = items.removeValue(forKey: id) { free(item, heldBy: id) }
        }

        /// Frees `item` when `id` still holds it.
        mutating func free(_ item: String, heldBy id: Int64) {
            if busy[item] == id { busy[item] = nil }
        }
    }

    /// How many operations may be on the wire at once (1: strictly in queue order).
    let window: Int
    /// How many attempts one transaction begins at most.
    let batchSize: Int
    /// Whether a conflict goes to its table's policy (a push) or waits for a person (Use Client).
    let applyingPolicy: Bool
    /// When a request whose connection dropped is sent again.
    let retry: ConnectionRetry
    var state: State
    /// What the run did so far, by operation.
    var result = PushResult()
    /// How many operations have had their answer (or were found not to be sent).
    var answered = 0

    init(
        _ queued: [Queued], window: Int, batchSize: Int = 16, applyingPolicy: Bool = true,
        retry: ConnectionRetry = ConnectionRetry()
    ) {
        self.window = max(1, window)
        self.batchSize = max(batchSize, self.window)
        self.applyingPolicy = applyingPolicy
        self.retry = retry
        state = .idle(Pipeline(waiting: queued))
    }

    // MARK: Events

    /// What came of an action the runner performed.
    enum Event: Sendable {
        /// A ``Action/commit(store:record:begin:)`` transaction committed: the attempts it began and
        /// what became of the conflicts it recorded.
        case committed(PushDriver.Stored)
        /// A ``Action/commit(store:record:begin:)`` transaction failed.
        case commitFailed(SyncError)
        /// A ``Action/send(_:applyingPolicy:)`` came back.
        case answered(Int64, Answer)
        /// A ``Action/send(_:applyingPolicy:)`` failed: its connection dropped, or it cannot succeed now.
        case requestFailed(Int64, SyncError)
        /// The pause of a ``Action/resend(_:after:)`` is over (or was cancelled).
        case resendDue(Int64)
    }

    /// Feeds `event` to its handler.
    mutating func receive(_ event: Event) -> [Action] {
        switch event {
        case .committed(let stored): committed(stored)
        case .commitFailed(let error): commitFailed(error)
        case .answered(let id, let answer): answered(id, answer)
        case .requestFailed(let id, let error): requestFailed(id, error)
        case .resendDue(let id): resendDue(id)
        }
    }

    /// The run starts: the first attempts are begun.
    mutating func start() -> [Action] {
        guard case .idle(let pipeline) = state else { return [] }
        return advance(pipeline)
    }

    /// The transaction committed: its answers are stored, its conflicts recorded and decided
    /// (`stored.decided`, in the order recorded), and `stored.begun` holds the attempts it began, in
    /// the order asked (nil for an operation not to be sent now: no longer queued, or its row purged).
    mutating func committed(_ stored: PushDriver.Stored) -> [Action] {
        switch state {
        case .running(var pipeline):
            absorbCommit(stored, into: &pipeline, running: true)
            return advance(pipeline)
        case .draining(var pipeline, let error):
            absorbCommit(stored, into: &pipeline, running: false)
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// The transaction failed: nothing of it is stored (its answers stay attempted, recognised by the
    /// next push). The run stops.
    mutating func commitFailed(_ error: SyncError) -> [Action] {
        switch state {
        case .running(var pipeline):
            dropCommit(from: &pipeline)
            return drain(pipeline, error)
        case .draining(var pipeline, let first):
            dropCommit(from: &pipeline)
            return drain(pipeline, first)
        case .idle, .finished:
            return []
        }
    }

    /// The request of operation `id` came back with `answer`.
    mutating func answered(_ id: Int64, _ answer: Answer) -> [Action] {
        switch state {
        case .running(var pipeline):
            absorb(id, answer, into: &pipeline)
            return advance(pipeline)
        case .draining(var pipeline, let error):
            absorb(id, answer, into: &pipeline)
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// The request of operation `id` failed; the operation is left attempted. A dropped connection
    /// is sent again after a pause while retries are left (``ConnectionRetry``); anything else
    /// (unreachable, a deadline passed, 5xx, 401/403, an answer that broke the protocol) stops the push.
    mutating func requestFailed(_ id: Int64, _ error: SyncError) -> [Action] {
        switch state {
        case .running(var pipeline):
            pipeline.inFlight.remove(id)
            let failures = pipeline.failures[id, default: 0] + 1
            if let pause = retry.pause(after: error, failures: failures), let item = pipeline.items[id] {
                pipeline.failures[id] = failures
                pipeline.pausing[id] = Queued(id: id, item: item)
                return [.resend(id, after: pause)] + advance(pipeline)
            }
            pipeline.settle(id)
            return drain(pipeline, error)
        case .draining(var pipeline, let first):
            pipeline.inFlight.remove(id)
            pipeline.settle(id)
            return drain(pipeline, first)
        case .idle, .finished:
            return []
        }
    }

    /// The pause of operation `id` is over: it is begun again, before the operations that wait.
    /// While the run drains it stays attempted, as its request left it.
    mutating func resendDue(_ id: Int64) -> [Action] {
        switch state {
        case .running(var pipeline):
            guard let queued = pipeline.pausing.removeValue(forKey: id) else { return [] }
            pipeline.settle(id)
            pipeline.passed.insert(queued, at: pipeline.passed.firstIndex { $0.id > id } ?? pipeline.passed.endIndex)
            pipeline.resending.insert(id)
            return advance(pipeline)
        case .draining(var pipeline, let error):
            guard pipeline.pausing.removeValue(forKey: id) != nil else { return [] }
            pipeline.settle(id)
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// The push was cancelled: the requests on the wire are cancelled too.
    mutating func cancelled() -> [Action] {
        switch state {
        case .idle:
            state = .finished
            return [.finish(store: [], record: [], release: [], error: .stopped(.cancelled))]
        case .running(let pipeline):
            let waiting = !pipeline.inFlight.isEmpty || !pipeline.pausing.isEmpty
            return (waiting ? [.cancelRequests] : []) + drain(pipeline, .stopped(.cancelled))
        case .draining, .finished:
            return []
        }
    }
}
