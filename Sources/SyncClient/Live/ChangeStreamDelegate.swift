import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol
import Synchronization

/// Reads the change channel's `text/event-stream` answer on the event loop: its head for the
/// caller, then the cursor of each `change` event into ``cursors``, noting on a clock when each part
/// arrives (``heard``) for the idle deadline.
///
/// Written here, rather than read through async-http-client's async body, so that the bytes are
/// heard as the event loop receives them: a busy cooperative pool, which only delays reading the
/// cursors, cannot make a live stream look silent.
final class ChangeStreamDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    /// The cursors of the announced changes; finishes when the answer ends, and throws when it fails.
    let cursors: AsyncThrowingStream<String, any Error>
    let heard = HeardTime()
    private let continuation: AsyncThrowingStream<String, any Error>.Continuation
    private let clock: any WallClock
    /// The head, once it came; who waits for it.
    private let head = Mutex<(head: HTTPResponseHead?, waiter: CheckedContinuation<HTTPResponseHead, any Error>?)>(
        (nil, nil))
    private let parser = Mutex(EventStreamParser())

    init(clock: any WallClock) {
        self.clock = clock
        (cursors, continuation) = AsyncThrowingStream.makeStream(of: String.self)
    }

    /// The answer's head; throws when the exchange fails before it.
    func responseHead(of task: HTTPClient.Task<Void>) async throws -> HTTPResponseHead {
        try await withCheckedThrowingContinuation { waiter in
            let came = head.withLock { state -> HTTPResponseHead? in
                if state.head == nil { state.waiter = waiter }
                return state.head
            }
            if let came { waiter.resume(returning: came) }
            // A failure before the head resumes the waiter through `didReceiveError`; one that came
            // before the wait began is the task's.
            task.futureResult.whenFailure { [self] error in failHead(error) }
        }
    }

    /// Ends the stream with `error` (a deadline passed), before its head or after.
    func stop(_ error: SyncError) {
        failHead(error)
        continuation.finish(throwing: error)
    }

    /// Runs `action` once the stream's reader stops reading it, or it ends.
    func whenTerminated(_ action: @escaping @Sendable () -> Void) {
        continuation.onTermination = { _ in action() }
    }

    private func failHead(_ error: any Error) {
        head.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }?.resume(throwing: error)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ received: HTTPResponseHead) -> EventLoopFuture<Void> {
        heard.heard(at: clock.now)
        head.withLock { state in
            state.head = received
            defer { state.waiter = nil }
            return state.waiter
        }?.resume(returning: received)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        heard.heard(at: clock.now)
        do {
            let events = try parser.withLock { try $0.feed(buffer.readableBytesView) }
            for event in events where event.event == "change" {
                if let id = event.id { continuation.yield(id) }
            }
        } catch {
            continuation.finish(throwing: error)
            task.cancel()
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        heard.end()
        failHead(error)
        continuation.finish(throwing: error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        heard.end()
        continuation.finish()
    }
}
