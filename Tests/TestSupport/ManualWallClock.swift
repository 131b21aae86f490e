import Foundation
import SyncClient
import Synchronization

/// A clock that only moves when the test moves it: whoever sleeps until a time wakes when the test
/// advances past it, at once and in order, however loaded the machine is.
public final class ManualWallClock: WallClock {
    private struct Sleeper {
        var until: Date
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextId: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A clock reading `start` (a fixed date by default, far from the wall clock's).
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: start))
    }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks sleep on it now.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// The earliest time a task sleeps until; nil when none sleeps.
    public var nextWake: Date? { state.withLock { $0.sleepers.map(\.until).min() } }

    public func sleep(until date: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextId += 1 }
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || date <= state.now { return true }
                    state.sleepers.append(Sleeper(until: date, id: id, continuation: continuation))
                    return false
                }
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
            cancelled?.continuation.resume(throwing: CancellationError())
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
        for sleeper in woken { sleeper.continuation.resume() }
    }
}
