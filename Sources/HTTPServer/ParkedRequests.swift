import Foundation
import Synchronization

/// How many requests are parked (suspended while an asynchronous handler runs), and who waits for
/// there to be none: a thread that may block (``waitUntilNone(deadline:)``) or a task that must not
/// (``none(deadline:)``).
final class ParkedRequests: Sendable {
    private struct State {
        var count = 0
        /// Tasks waiting in ``none(deadline:)``, by number.
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters whose deadline passed before they were registered.
        var expired: Set<Int> = []
        var lastWaiter = 0
    }

    private let state = Mutex(State())
    /// Broadcast whenever the count drops to zero, for threads blocked in ``waitUntilNone(deadline:)``
    /// (`Mutex` has no condition variable of its own).
    private let condition = NSCondition()

    func add() {
        state.withLock { $0.count += 1 }
    }

    func remove() {
        let (none, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.count -= 1
            guard state.count == 0 else { return (false, []) }
            defer { state.waiters = [:] }
            return (true, Array(state.waiters.values))
        }
        guard none else { return }
        for waiter in waiters { waiter.resume() }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread until no request is parked, or until `deadline`.
    func waitUntilNone(deadline: ContinuousClock.Instant) {
        condition.lock()
        defer { condition.unlock() }
        while state.withLock({ $0.count > 0 }) {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }

    /// Suspends until no request is parked, or until `deadline`; holds no thread meanwhile.
    func none(deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state -> Int in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        await withDiscardingTaskGroup { group in
            // The deadline: it ends the wait unless the requests ended first.
            group.addTask {
                do { try await Task.sleep(until: deadline) } catch { return }  // cancelled: no longer waited for
                let waiter = self.state.withLock { state in
                    let waiter = state.waiters.removeValue(forKey: id)
                    if waiter == nil { state.expired.insert(id) }
                    return waiter
                }
                waiter?.resume()
            }
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.count == 0 || state.expired.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            group.cancelAll()
        }
    }
}
