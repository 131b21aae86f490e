/// How a job ended, as its ``JobSlot`` learns it: run to its end, or stopped by an error, with what
/// it did before. The slot keeps the last sync from it (``SyncSummary/init(_:_:)``) and hands the
/// outcome, or the error, to whoever asked for the job.
enum JobEnding: Sendable {
    /// The job ran to its end.
    case finished(JobOutcome)
    /// `error` stopped the job; `partial` is what it did before (nil when it has nothing to show).
    case stopped(partial: JobOutcome?, by: any Error)

    /// `outcome`, stopped by `error` when there is one.
    init(_ outcome: JobOutcome, stoppedBy error: (any Error)?) {
        self = error.map { .stopped(partial: outcome, by: $0) } ?? .finished(outcome)
    }

    /// The ending of `body`: its outcome, or its error with nothing to show.
    static func of(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> JobOutcome
    ) async -> JobEnding {
        do { return .finished(try await body()) } catch { return .stopped(partial: nil, by: error) }
    }

    /// This ending stopped by `error` instead, with what the job did kept.
    func stopped(by error: any Error) -> JobEnding {
        switch self {
        case .finished(let outcome): .stopped(partial: outcome, by: error)
        case .stopped(let partial, _): .stopped(partial: partial, by: error)
        }
    }

    /// What the one who asked for the job gets: the outcome, or the error.
    var result: Result<JobOutcome, any Error> {
        switch self {
        case .finished(let outcome): .success(outcome)
        case .stopped(_, let error): .failure(error)
        }
    }
}
