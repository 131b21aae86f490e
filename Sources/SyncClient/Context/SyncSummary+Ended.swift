import Foundation

extension SyncSummary {
    /// The summary of a `kind` of sync that ended now with `error` (nil: ran to the end): a stop
    /// says why in ``stopReason``, another error in ``error``.
    init(
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
    init(push result: PushResult, error: SyncError?) {
        self.init(
            .push, ended: error, pushed: result.pushed.count, conflicts: result.conflicts.count,
            failed: result.failed.count)
    }
}
