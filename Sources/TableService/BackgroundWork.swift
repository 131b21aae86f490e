import Synchronization

/// The table service's background work — the fleet's passes, the schema backfill, the alerts'
/// deliveries — each a child task of one task group that the service owns: begun with the
/// service, cancelled and waited for when it stops, so that nothing it began outlives it.
///
/// The group runs in the service's one unstructured task: the service is started and stopped by
/// embedders (the dashboard, `serve`, tests, benchmarks) that may run no service group.
final class BackgroundWork: Sendable {
    typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let more: AsyncStream<Job>.Continuation
    private let group = Mutex<Task<Void, Never>?>(nil)

    init() {
        (jobs, more) = AsyncStream.makeStream(of: Job.self)
    }

    /// Starts the group with `jobs`, which run even when it is stopped at once (they begin
    /// cancelled then), and the jobs ``run(_:)`` gives it from then on.
    func begin(_ jobs: [Job]) {
        let stream = self.jobs
        group.withLock { group in
            group = Task {
                await withDiscardingTaskGroup { group in
                    for job in jobs { group.addTask { await job() } }
                    for await job in stream { group.addTask { await job() } }
                }
            }
        }
    }

    /// Runs `job` as a child of the group; after ``stop()`` or ``cancel()``, not at all.
    func run(_ job: @escaping Job) {
        more.yield(job)
    }

    /// Cancels every job and waits until each has ended.
    func stop() async {
        await cancel()?.value
    }

    /// Cancels every job without waiting for them; returns the group's task.
    @discardableResult
    func cancel() -> Task<Void, Never>? {
        more.finish()
        return group.withLock { group in
            group?.cancel()
            return group
        }
    }
}
