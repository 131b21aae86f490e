/// What a job came to, by kind.
public enum JobOutcome: Sendable {
    case pushed(PushResult)
    case pulled(PullResult)
    case synced(SyncRunResult)
    /// The reports of the tables verified before the job ended, and what stopped it early, if anything.
    case verified([VerifyReport], stopped: SyncError?)
    case decided(OperationOutcome)
}
