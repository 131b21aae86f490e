import Synchronization

/// A one-way gate: closed until ``open()``, then open for good. Any number of tasks wait for it.
///
/// Ours, not a library's: swift-async-algorithms has channels that a consumer's cancellation
/// ends for every consumer, and this needs many waiters, each free to give up alone.
package final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether ``open()`` was called.
    package var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate: every waiter goes on, and every later ``wait()`` returns at once.
    package func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open, or once the calling task is cancelled (check which with
    /// ``isOpen``).
    package func wait() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let goesOn = state.withLock { state in
                    guard !state.isOpen, !Task.isCancelled else { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if goesOn { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
