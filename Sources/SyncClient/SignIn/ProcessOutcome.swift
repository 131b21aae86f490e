import Foundation

/// What a finished program left: its exit status and its output, with the deadline and the cancel a
/// sync needs; both pipes are read to their end on threads of their own, so a chatty program never
/// blocks on a full pipe.
public struct ProcessOutcome: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
    /// Stopped at the deadline.
    public var timedOut: Bool

    /// Runs `arguments` (the first is the program's absolute path) until it exits, `deadline`
    /// seconds pass on `clock` (then SIGTERM, and SIGKILL a second later, to it and everything it
    /// started), or the task is cancelled (the same, then `CancellationError`). Standard input is empty.
    public static func run(
        _ arguments: [String], deadline: TimeInterval, on clock: any WallClock = SystemWallClock()
    ) async throws -> ProcessOutcome {
        let child = try ChildProcess.start(arguments)
        async let output = child.readAll()
        let (status, timedOut) = await withTaskGroup(of: Bool.self) { group in
            // Stops the program at the deadline; whether it did.
            group.addTask {
                try? await clock.sleep(until: clock.now.addingTimeInterval(deadline))
                guard !Task.isCancelled, !child.hasExited else { return false }
                child.stop()
                return true
            }
            let status = await withTaskCancellationHandler {
                await child.exitStatus()
            } onCancel: {
                child.stop()
            }
            group.cancelAll()
            return (status, await group.next() ?? false)
        }
        let (out, err) = await output
        try Task.checkCancellation()
        if timedOut { return ProcessOutcome(status: -1, standardOutput: "", standardError: "", timedOut: true) }
        return ProcessOutcome(
            status: status, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self), timedOut: false)
    }
}
