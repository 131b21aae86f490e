import Foundation
import SyncClient
import Synchronization

/// A clock that only moves when the test moves it: whoever sleeps until a time wakes (and a timer
/// runs) when the test advances past it, at once and in order, however loaded the machine is.
public final class ManualWallClock: WallClock {
    private struct Sleeper {
        var until: Date
        var id: UInt64
        var wake: Wake
    }

    /// How a sleeper is woken: a task that sleeps, or a timer's action.
    private enum Wake {
        case task(CheckedContinuation<Void, any Error>)
        case timer(@Sendable () -> Void)

        func callAsFunction() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .timer(let action): action()
            }
        }
    }

    /// A timer of ``schedule(at:_:)``: cancelling takes it off the clock.
    private struct Timer: ClockTimer {
        let clock: ManualWallClock
        let id: UInt64

        func cancel() { clock.state.withLock { $0.sleepers.removeAll { $0.id == id } } }
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextId: UInt64 = 0
        /// Who waits for a task to sleep (``someoneSleeps()``).
        var watchers: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state: Mutex<State>

    /// A clock reading `start` (a fixed date by default, far from the wall clock's).
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: start))
    }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks sleep on it, and timers wait on it, now.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// The earliest time a task sleeps or a timer waits until; nil when none does.
    public var nextWake: Date? { state.withLock { $0.sleepers.map(\.until).min() } }

    public func sleep(until date: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextId += 1 }
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (ready, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if Task.isCancelled || date <= state.now { return (true, []) }
                    state.sleepers.append(Sleeper(until: date, id: id, wake: .task(continuation)))
                    defer { state.watchers = [:] }
                    return (false, Array(state.watchers.values))
                }
                for watcher in watchers { watcher.resume() }
                if ready {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            if case .task(let continuation)? = cancelled?.wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    public func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer {
        let (id, due, watchers) = state.withLock { state -> (UInt64, Bool, [CheckedContinuation<Void, Never>]) in
            defer { state.nextId += 1 }
            if date <= state.now { return (state.nextId, true, []) }
            state.sleepers.append(Sleeper(until: date, id: state.nextId, wake: .timer(action)))
            defer { state.watchers = [:] }
            return (state.nextId, false, Array(state.watchers.values))
        }
        for watcher in watchers { watcher.resume() }
        if due { action() }
        return Timer(clock: self, id: id)
    }

    /// Returns once a task sleeps or a timer waits on the clock (at once when one does), or when the
    /// waiting task is cancelled.
    public func someoneSleeps() async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextId += 1 }
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if !state.sleepers.isEmpty || Task.isCancelled { return true }
                    state.watchers[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.watchers.removeValue(forKey: id) }?.resume()
        }
    }

    /// Runs `work`, moving the clock to the time a task sleeps or a timer waits until as soon as one
    /// does, until `work` ends: each deadline in it passes at once and in order, without a wait on
    /// the wall clock.
    public func passingEveryDeadline<T: Sendable>(of work: @escaping @Sendable () async -> T) async -> T {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                while !Task.isCancelled {
                    await self.someoneSleeps()
                    if let wake = self.nextWake { self.advance(to: wake) }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let result = next { return result }
            }
            fatalError("the work's task always gives a result")
        }
    }

    /// Moves the clock forward by `seconds`, waking every task that slept until then.
    public func advance(by seconds: TimeInterval) {
        advance(to: now.addingTimeInterval(seconds))
    }

    /// Moves the clock to `date` (never back), waking every task that slept until then, earliest first.
    public func advance(to date: Date) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, date)
            let due = state.sleepers.filter { $0.until <= state.now }.sorted { $0.until < $1.until }
            state.sleepers.removeAll { $0.until <= state.now }
            return due
        }
        for sleeper in woken { sleeper.wake() }
    }
}
