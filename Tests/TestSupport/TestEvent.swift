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
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// Marks the event as happened and wakes every waiter (later calls do nothing).
    public func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.happened else { return [] }
            state.happened = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether ``signal()`` was called.
    public var happened: Bool { state.withLock { $0.happened } }

    /// Returns once the event happened (at once when it already did).
    public func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.happened { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
