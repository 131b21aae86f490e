import Foundation
import Synchronization

/// What a finished program left: its exit status and its output. Foundation's `Process` runs it;
/// this adds the deadline and the cancel a sync needs (neither is Foundation's), and reads both
/// pipes to their end on threads of their own, so a chatty program never blocks on a full pipe.
struct ProcessOutcome: Sendable {
    var status: Int32
    var standardOutput: String
    var standardError: String
    /// Stopped at the deadline.
    var timedOut: Bool

    /// Runs `arguments` (the first is the program's path) until it exits, `deadline` seconds pass
    /// (then SIGTERM, and SIGKILL a second later, to it and everything it started), or the task is
    /// cancelled (the same, then `CancellationError`). Standard input is empty.
    static func run(_ arguments: [String], deadline: TimeInterval) async throws -> ProcessOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let exited = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in
            exited.continuation.yield()
            exited.continuation.finish()
        }
        try ProcessLaunch.run(process)
        let reading = (read(output), read(errors))
        let stopper = Task {
            try? await Task.sleep(for: .seconds(deadline))
            guard !Task.isCancelled, process.isRunning else { return false }
            stop(process)
            return true
        }
        await withTaskCancellationHandler {
            for await _ in exited.stream {}
        } onCancel: {
            stop(process)
        }
        stopper.cancel()
        let timedOut = await stopper.value
        try Task.checkCancellation()
        if timedOut { return ProcessOutcome(status: -1, standardOutput: "", standardError: "", timedOut: true) }
        let (out, err) = (await reading.0.value, await reading.1.value)
        return ProcessOutcome(
            status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self), timedOut: timedOut)
    }

    /// The pipe's bytes up to its end, read on a thread of its own (the read blocks).
    private static func read(_ pipe: Pipe) -> Task<Data, Never> {
        let handle = pipe.fileHandleForReading
        return Task.detached {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: handle.readDataToEndOfFile()) }
            }
        }
    }

    /// SIGTERM to its process group, then SIGKILL a second later. Foundation starts each program in
    /// a group of its own: what it started goes too (a shell's `sleep` would otherwise live on,
    /// holding the pipes, and Foundation tells of the end only once they close).
    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        let group = -process.processIdentifier
        kill(group, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { kill(group, SIGKILL) }
    }
}

/// Starts programs one at a time in this process. Foundation's `Process.run()` crashed (in a
/// `memcpy` of its launch) when two threads started programs at once; a launch takes about a
/// millisecond, so the line costs nothing.
public enum ProcessLaunch {
    private static let line = Mutex(())

    /// Starts `process` (as `Process.run()` does), after any other launch under way.
    public static func run(_ process: Process) throws {
        try line.withLock { _ in try process.run() }
    }
}
