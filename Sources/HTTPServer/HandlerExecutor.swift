import Foundation

/// The threads that run asynchronous handlers after they first suspend (a handler starts on the
/// server thread that received its request, and one that never suspends finishes there): a few of
/// the server's own, not Swift's cooperative pool (as many threads as cores: two on a small
/// machine). Code that embeds the server, tests above all, may block cooperative threads while it
/// waits for an answer (a blocking socket read, a synchronous stop); handlers that needed those
/// threads would then never run.
///
/// Handlers still never block for long: a remote database call awaits its answer, and the thread
/// goes back to the other handlers. (Short SQLite transactions run where they are called.)
final class HandlerExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is touched only with `condition` locked.
    static let shared = HandlerExecutor(threads: 8)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "todosync.handler.\(index)"
            // As the server's threads (see `shim.c`): a handler's stack does not depend on `ulimit -s`.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
