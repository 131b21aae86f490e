import NIOCore

/// A task executor that runs its jobs on one NIO event loop: the loop that all of a
/// ``PostgresTableStore``'s connections live on.
///
/// A store call that runs with this executor as its task's preference (``PostgresTableStore``
/// does so for each request's statements) leases a connection, writes its messages and decodes
/// the answer on the loop's own thread: postgres-nio resumes the waiting task where the answer
/// arrived, and a write from the loop goes out at once. Without it, each step crossed threads
/// (the handler's thread, the loop, the handler's thread again), each crossing a wake-up and a
/// context switch, which were a large part of the service's CPU per PostgreSQL write.
final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // From the loop itself (a continuation resumed by postgres-nio), `execute` only queues the
        // job for the loop's current turn: no wake-up.
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
