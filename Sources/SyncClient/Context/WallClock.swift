import Foundation

/// What time it is, and a wait until a time: the system's, or one a test moves. Schedules and
/// expiries read it rather than the wall clock, so that their tests step time instead of waiting
/// for it.
public protocol WallClock: Sendable {
    /// The time now.
    var now: Date { get }
    /// Returns once ``now`` has reached `date`; throws `CancellationError` when the task is cancelled.
    func sleep(until date: Date) async throws
}

extension WallClock {
    /// Returns once `duration` has passed on this clock; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        try await sleep(until: now.addingTimeInterval(seconds))
    }
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(until date: Date) async throws {
        try await Task.sleep(for: .seconds(max(0, date.timeIntervalSinceNow)))
    }
}
