import Dispatch
import Foundation

/// What time it is, a wait until a time, and a timer: the system's, or one a test moves. Deadlines,
/// schedules and expiries read it rather than the wall clock, so that their tests step time instead
/// of waiting for it.
public protocol WallClock: Sendable {
    /// The time now.
    var now: Date { get }
    /// Returns once ``now`` has reached `date`; throws `CancellationError` when the task is cancelled.
    func sleep(until date: Date) async throws
    /// Runs `action` once ``now`` has reached `date`, unless the timer it returns is cancelled first.
    ///
    /// For deadlines, which must pass however busy Swift's cooperative pool is: the action runs on
    /// a thread of the clock's, and no task waits (nor throws when the timer is cancelled).
    func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer
}

/// A timer of ``WallClock/schedule(at:_:)``.
public protocol ClockTimer: Sendable {
    /// Its action will not run (when it has not begun already).
    func cancel()
}

extension WallClock {
    /// Returns once `duration` has passed on this clock; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        try await sleep(until: now.addingTimeInterval(seconds))
    }
}

/// The system's clock: its timers are Dispatch timer sources on a global queue.
public struct SystemWallClock: WallClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(until date: Date) async throws {
        try await Task.sleep(for: .seconds(max(0, date.timeIntervalSinceNow)))
    }

    public func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer {
        let source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + max(0, date.timeIntervalSinceNow))
        source.setEventHandler {
            // Once: cancelling also releases the handler, and what it holds.
            source.cancel()
            action()
        }
        source.resume()
        return DispatchTimer(source: source)
    }
}

/// A Dispatch timer source as a ``ClockTimer``.
// @unchecked Sendable: a Dispatch source may be cancelled from any thread.
private final class DispatchTimer: ClockTimer, @unchecked Sendable {
    private let source: any DispatchSourceTimer

    init(source: any DispatchSourceTimer) { self.source = source }

    func cancel() { source.cancel() }
}
