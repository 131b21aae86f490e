import Synchronization

/// A long-lived part's background work — a service's bookkeeping and deliveries, the dashboard's
/// auto-sync, its followers and its doctor runs — each a child task of one task group the part
/// owns: begun with it, cancelled and waited for when it stops, so that nothing it began outlives it.
///
/// The group runs in the part's one unstructured task: the table service and the dashboard are
/// started and stopped by embedders (the commands' service groups, tests, benchmarks) that may run
/// no service group, and a job may be given from any thread (a request, a timer).
package final class BackgroundWork: Sendable {
    package typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<@Sendable () async -> Void>
    private let more: AsyncStream<@Sendable () async -> Void>.Continuation
    private let group = Mutex<Task<Void, Never>?>(nil)

    package init() {
        (jobs, more) = AsyncStream.makeStream()
    }

    /// Starts the group with `jobs`, which run even when it is stopped at once (they begin
    /// cancelled then), and the jobs ``run(_:)`` gives it from then on.
    package func begin(_ jobs: [Job] = []) {
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

    /// Runs `job` as a child of the group; after ``stop()`` or ``cancel()``, not at all (its
    /// handle then says it has ended).
    ///
    /// - Returns: the job's handle, to cancel it alone or wait for its end.
    @discardableResult
    package func run(_ job: @escaping Job) -> BackgroundJob {
        let handle = BackgroundJob()
        let body: Job = { [handle] in
            await withTaskGroup(of: Void.self) { race in
                race.addTask { await job() }
                // Ends the job when its handle is cancelled (a group cancels its children only all at once).
                race.addTask { await handle.cancelled.wait() }
                await race.next()
                race.cancelAll()
            }
            handle.ended.open()
        }
        if case .terminated = more.yield(body) { handle.ended.open() }
        return handle
    }

    /// Cancels every job and waits until each has ended.
    package func stop() async {
        await cancel()?.value
    }

    /// Cancels every job without waiting for them; returns the group's task.
    @discardableResult
    package func cancel() -> Task<Void, Never>? {
        more.finish()
        return group.withLock { group in
            group?.cancel()
            return group
        }
    }
}

/// One job of a ``BackgroundWork``: cancelled alone, or waited for.
package struct BackgroundJob: Sendable {
    fileprivate let cancelled = Latch()
    fileprivate let ended = Latch()

    /// Cancels this job only; it ends within moments (as its body honours cancellation).
    package func cancel() { cancelled.open() }

    /// Whether the job has ended (or never began, given after the work stopped).
    package var hasEnded: Bool { ended.isOpen }

    /// Returns once the job has ended, or once the calling task is cancelled.
    package func finished() async { await ended.wait() }
}
