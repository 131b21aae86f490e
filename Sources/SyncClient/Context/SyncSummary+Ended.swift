import Foundation

extension SyncSummary {
    /// The last sync that `job`, ended as `ending`, leaves: the one place a summary is made of a job
    /// (its ``JobSlot`` keeps it). A push, Use Client or an overturn leaves a push's summary; a pull
    /// leaves its table's; a sync leaves its last step's (the pull it stopped in or ended with, the
    /// push when no pull began). Nil when it leaves none: a verify only reads, and a sync that
    /// neither pushed nor began a pull did nothing.
    init?(_ job: SyncJob, _ ending: JobEnding) {
        let (outcome, error): (JobOutcome?, SyncError?)
        switch ending {
        case .finished(let finished): (outcome, error) = (finished, nil)
        case .stopped(let partial, let stop): (outcome, error) = (partial, SyncError(stop))
        }
        switch job {
        case .push:
            guard case .pushed(let result)? = outcome else { return nil }
            self.init(push: result, error: error)
        case .pull(let table, _, _, _):
            guard case .pulled(let result)? = outcome else { return nil }
            self.init(.pull, table: table, ended: error, pulled: result.received)
        case .sync:
            guard case .synced(let result)? = outcome else { return nil }
            self.init(sync: result, error: error)
        case .useClient, .overturn:
            var result = PushResult()
            if case .decided(let decided)? = outcome { result.add(decided, 0) }
            self.init(push: result, error: error)
        case .verify:
            return nil
        }
    }

    /// The summary of a sync's last step, stopped by `error` when there is one.
    private init?(sync result: SyncRunResult, error: SyncError?) {
        switch result.pulls.last {
        case .pulled(let table, let pull)?, .stopped(let table, let pull)?:
            self.init(.pull, table: table, ended: error, pulled: pull.received)
        case .missing(let table)?:
            self.init(.pull, table: table, ended: .serviceHasNoTable(table))
        case nil:
            guard let pushed = result.pushed else { return nil }
            self.init(push: pushed, error: error)
        }
    }

    /// The summary of a `kind` of sync that ended now with `error` (nil: ran to the end): a stop
    /// says why in ``stopReason``, another error in ``error``.
    private init(
        _ kind: Kind, table: String? = nil, ended error: SyncError?, pushed: Int = 0, conflicts: Int = 0,
        failed: Int = 0, pulled: Int = 0
    ) {
        var stopReason: StopReason?
        if case .stopped(let reason)? = error { stopReason = reason }
        self.init(
            kind: kind, table: table, finishedAt: Date(), pushed: pushed, conflicts: conflicts, failed: failed,
            pulled: pulled, stopReason: stopReason, error: stopReason == nil ? error?.description : nil)
    }

    /// The summary of a push that ended with `error` (nil: ran to the end).
    private init(push result: PushResult, error: SyncError?) {
        self.init(
            .push, ended: error, pushed: result.pushed.count, conflicts: result.conflicts.count,
            failed: result.failed.count)
    }
}
