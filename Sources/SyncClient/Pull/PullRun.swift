/// One pull's pages as a state machine: which page to ask for, which to write, and when the pull
/// ends. Pure: no store, no network, no clock. ``PullRunner`` performs the ``Action``s it returns
/// and feeds back what came of them, one event at a time; ``PullCursor`` judges each page.
///
/// - One page is on the wire at a time, and one is written at a time (with the delta token after it,
///   in one transaction), in page order: page n is written while page n+1 is fetched. A page that
///   arrives while the one before is still being written waits for it, and the next page is asked
///   for only once it is written: at most two pages are held in memory.
/// - An empty page ends the pull once the pages before it are written.
/// - A page the cursor refuses (``ServiceFault``), a request that failed, or a cancel stops the pull:
///   nothing new is asked for, and the pages already received are written before it ends.
/// - A write that failed stops the pull too, but the pages after it are dropped (their token would
///   skip the failed page's rows), and its error is the one the pull ends with.
///
/// ```swift
/// var run = PullRun(cursor: PullCursor(table: "todoitem", token: DeltaToken()))
/// var actions = run.start()   // [.fetch(page: 1, token: DeltaToken(), counting: true)]
/// actions = run.fetched(1, rows: keys, total: 120)   // [.write(page: 1, …), .fetch(page: 2, …)]
/// actions = run.fetched(2, rows: [], total: nil)   // [] (page 1 is still being written)
/// actions = run.written(1, counts)   // [.finish(error: nil)]
/// ```
struct PullRun: Sendable {
    /// What the runner is asked to do.
    enum Action: Sendable, Equatable {
        /// Ask for page `page`, after `token`; `counting`: ask how many rows will come as well.
        case fetch(page: Int, token: DeltaToken, counting: Bool)
        /// Write page `page`'s rows and `token` (the cursor after it), in one transaction.
        case write(page: Int, token: DeltaToken)
        /// Cancel the page on the wire: the pull stops.
        case cancelFetch
        /// The pull is over; `error` nil: every page the service had is written.
        case finish(error: SyncError?)
    }

    /// What came of an action.
    enum Event: Sendable {
        /// A ``Action/fetch(page:token:counting:)`` came back with these rows (and the count asked for).
        case fetched(Int, rows: [PullCursor.RowKey], total: Int?)
        /// A ``Action/fetch(page:token:counting:)`` failed.
        case fetchFailed(SyncError)
        /// A ``Action/write(page:token:)`` committed.
        case written(Int, PageCounts)
        /// A ``Action/write(page:token:)`` failed: nothing of it is stored.
        case writeFailed(SyncError)
    }

    /// Where the pull is.
    enum State: Sendable {
        /// Not started.
        case idle
        /// Pages are asked for and written.
        case running(Pipeline)
        /// The pull must end with `error`: waiting for the page on the wire and the write still out.
        case draining(Pipeline, error: SyncError)
        /// Finished; nothing more happens.
        case finished
    }

    /// The pages between the wire and the store.
    struct Pipeline: Sendable {
        /// The page on the wire.
        var fetching: Int?
        /// The page being written.
        var writing: Int?
        /// A page received while the one before was being written, with the token after it.
        var waiting: (page: Int, token: DeltaToken)?
        /// The service sent its last (empty) page.
        var complete = false

        /// Starts writing the waiting page once no write runs: its write, else nothing.
        mutating func writeWaiting() -> [Action] {
            guard writing == nil, let waiting else { return [] }
            writing = waiting.page
            self.waiting = nil
            return [.write(page: waiting.page, token: waiting.token)]
        }
    }

    private(set) var cursor: PullCursor
    private(set) var state: State = .idle
    /// What the pull did so far.
    private(set) var result: PullResult
    /// How many rows the service said will come, once the first page told.
    private(set) var total: Int?

    init(cursor: PullCursor) {
        self.cursor = cursor
        result = PullResult(table: cursor.table)
    }

    // MARK: Events

    /// Feeds `event` to its handler.
    mutating func receive(_ event: Event) -> [Action] {
        switch event {
        case .fetched(let page, let rows, let total): fetched(page, rows: rows, total: total)
        case .fetchFailed(let error): fetchFailed(error)
        case .written(let page, let counts): written(page, counts)
        case .writeFailed(let error): writeFailed(error)
        }
    }

    /// The pull starts: the first page is asked for, with the count of rows to come.
    mutating func start() -> [Action] {
        guard case .idle = state else { return [] }
        state = .running(Pipeline(fetching: 1))
        return [.fetch(page: 1, token: cursor.token, counting: true)]
    }

    /// Page `page` came back: the cursor judges it, and it is written (or waits for the page before).
    mutating func fetched(_ page: Int, rows: [PullCursor.RowKey], total: Int?) -> [Action] {
        switch state {
        case .running(var pipeline):
            pipeline.fetching = nil
            result.pages += 1
            if let total { self.total = total }
            do {
                guard try cursor.advance(over: rows) else {
                    pipeline.complete = true
                    return advance(pipeline)
                }
            } catch {
                return drain(pipeline, .serviceFault(error))
            }
            result.received += rows.count
            pipeline.waiting = (page, cursor.token)
            return advance(pipeline)
        case .draining(var pipeline, let error):
            // Asked for before the pull stopped: not written, its rows are asked for by the next pull.
            pipeline.fetching = nil
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// The page on the wire failed (or was cancelled): the pull stops once the pages received are written.
    mutating func fetchFailed(_ error: SyncError) -> [Action] {
        switch state {
        case .running(var pipeline), .draining(var pipeline, _):
            // While draining, the first failure stays the one the pull ends with (see `ending`).
            pipeline.fetching = nil
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// Page `page` and its token are stored.
    mutating func written(_ page: Int, _ counts: PageCounts) -> [Action] {
        result.written += counts.written
        result.deleted += counts.deleted
        result.skippedPending += counts.skipped
        switch state {
        case .running(var pipeline):
            pipeline.writing = nil
            return advance(pipeline)
        case .draining(var pipeline, let error):
            pipeline.writing = nil
            return drain(pipeline, error)
        case .idle, .finished:
            return []
        }
    }

    /// The write failed: the pages after it are dropped, and the pull ends with this error.
    mutating func writeFailed(_ error: SyncError) -> [Action] {
        switch state {
        case .running(var pipeline), .draining(var pipeline, _):
            pipeline.writing = nil
            pipeline.waiting = nil
            let cancel: [Action] = pipeline.fetching == nil ? [] : [.cancelFetch]
            return cancel + drain(pipeline, error, dropping: true)
        case .idle, .finished:
            return []
        }
    }

    /// The pull was cancelled: the page on the wire is cancelled, the pages received are written.
    mutating func cancelled() -> [Action] {
        switch state {
        case .idle:
            state = .finished
            return [.finish(error: .stopped(.cancelled))]
        case .running(let pipeline):
            let cancel: [Action] = pipeline.fetching == nil ? [] : [.cancelFetch]
            return cancel + drain(pipeline, .stopped(.cancelled))
        case .draining, .finished:
            return []
        }
    }

    // MARK: Decisions

    /// The next actions of a running pull: the waiting page's write once none runs, the next page once
    /// none waits, or the end.
    private mutating func advance(_ pipeline: Pipeline) -> [Action] {
        var pipeline = pipeline
        var actions = pipeline.writeWaiting()
        if !pipeline.complete, pipeline.fetching == nil, pipeline.waiting == nil {
            let page = result.pages + 1
            pipeline.fetching = page
            actions.append(.fetch(page: page, token: cursor.token, counting: false))
        }
        if pipeline.complete, pipeline.writing == nil, pipeline.waiting == nil {
            state = .finished
            actions.append(.finish(error: nil))
        } else {
            state = .running(pipeline)
        }
        return actions
    }

    /// After the first failure: nothing new is asked for; the page waiting is written (unless a write
    /// failed), and the pull ends once nothing is on the wire or being written.
    private mutating func drain(_ pipeline: Pipeline, _ error: SyncError, dropping: Bool = false) -> [Action] {
        var pipeline = pipeline
        let ending = Self.ending(current: state, new: error, writeFailed: dropping)
        let actions = pipeline.writeWaiting()
        guard pipeline.fetching == nil, pipeline.writing == nil else {
            state = .draining(pipeline, error: ending)
            return actions
        }
        state = .finished
        return actions + [.finish(error: ending)]
    }

    /// The error a stopping pull ends with: a failed write's (its page is lost to this pull, and
    /// it explains why the pages after it were dropped), else the first failure's.
    private static func ending(current: State, new: SyncError, writeFailed: Bool) -> SyncError {
        if case .draining(_, let first) = current, !writeFailed { return first }
        return new
    }
}
