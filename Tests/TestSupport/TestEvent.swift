import Background

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
    private let latch = Latch()

    public init() {}

    /// Marks the event as happened and wakes every waiter (later calls do nothing).
    public func signal() { latch.open() }

    /// Whether ``signal()`` was called.
    public var happened: Bool { latch.isOpen }

    /// Returns once the event happened (at once when it already did), or when the waiting task is
    /// cancelled (a test's time limit): a test waiting for an event that never comes fails, not hangs.
    public func wait() async { await latch.wait() }
}
