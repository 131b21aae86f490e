/// How a sync sends a request again when its connection dropped (``StopReason/connectionLost(_:)``):
/// a few times, after growing pauses, before the sync stops with that error.
///
/// Safe for every request: a pull page is a `GET`, and a push operation sent again is recognised by
/// the service's answer when the first one was applied (its answer was lost). Other failures (a
/// refused connection, a deadline, 5xx, 401) stop at once: waiting would not change them.
public struct ConnectionRetry: Sendable {
    /// How many times one request is sent again.
    public var retries: Int
    /// The pause before the first resend; each next one is twice as long.
    public var firstPause: Duration

    /// Up to `retries` resends, after `firstPause`, twice that, and so on.
    public init(retries: Int = 4, firstPause: Duration = .milliseconds(50)) {
        self.retries = max(0, retries)
        self.firstPause = firstPause
    }

    /// The pause before sending again after `failures` failures in a row; nil when the request
    /// must not be sent again (not a dropped connection, or no retries left).
    public func pause(after error: SyncError, failures: Int) -> Duration? {
        guard case .stopped(.connectionLost) = error, failures <= retries, failures > 0 else { return nil }
        return firstPause * (1 << min(failures - 1, 16))
    }

    /// Runs `request`, sending it again after a dropped connection as ``pause(after:failures:)``
    /// says, pausing on `clock`; the last error when it never went through.
    func run<T>(on clock: any WallClock, _ request: () async throws(SyncError) -> T) async throws(SyncError) -> T {
        var failures = 0
        while true {
            do {
                return try await request()
            } catch {
                failures += 1
                guard let pause = pause(after: error, failures: failures) else { throw error }
                do { try await clock.sleep(for: pause) } catch { throw .stopped(.cancelled) }
            }
        }
    }
}
