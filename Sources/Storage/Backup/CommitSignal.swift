/// Tells a waiting task that something was committed (coalesced: many commits before it wakes
/// are one signal). Cheap to send from every commit.
public final class CommitSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A commit happened (or the waiter should look anyway).
    public func send() {
        continuation.yield()
    }

    /// Ends the signals: ``signals`` finishes.
    public func finish() {
        continuation.finish()
    }

    /// The signals, for one waiter.
    public var signals: AsyncStream<Void> { stream }
}
