import Foundation
import Synchronization

/// Something that happens once, which a test waits for and another task (a proxy's interceptor, a
/// server's handler, a progress watcher) signals: tests wait for events, never for a duration.
///
/// ```swift
/// let secondPage = TestEvent()
/// proxy.intercept { _, _ in
///     secondPage.signal()
///     return .withhold
/// }
/// await secondPage.wait()
/// ```
public final class TestEvent: Sendable {
    private struct State {
        var happened = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// Marks the event as happened and wakes every waiter (later calls do nothing).
    public func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.happened else { return [] }
            state.happened = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether ``signal()`` was called.
    public var happened: Bool { state.withLock { $0.happened } }

    /// Returns once the event happened (at once when it already did), or when the waiting task is
    /// cancelled (a test's time limit): a test waiting for an event that never comes fails, not hangs.
    public func wait() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.happened || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
