import Foundation
import HTTPTypes
import Synchronization

/// One event of a `text/event-stream` answer (the WHATWG Server-Sent Events format).
public struct ServerSentEvent: Sendable, Equatable {
    /// Sent as `id:`; a browser's `EventSource` sends the last one back as `Last-Event-ID`.
    public var id: String?
    /// Sent as `event:` (the listener's name on the client; absent means `message`).
    public var event: String?
    /// Sent as `data:` lines (a line each for multi-line data).
    public var data: String

    public init(id: String? = nil, event: String? = nil, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// The event's bytes on the wire, ending with the blank line that dispatches it. Line breaks in
    /// `id` or `event` would start a field of their own, so they become spaces there.
    var encoded: String {
        var text = ""
        if let event { text += "event: \(Self.oneLine(event))\n" }
        if let id { text += "id: \(Self.oneLine(id))\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line.hasSuffix("\r") ? line.dropLast() : line)\n"
        }
        return text + "\n"
    }

    private static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

/// The sending end of a `text/event-stream` answer (see ``Response/eventStream(headers:bufferLimit:_:)``).
///
/// Events are queued here and written when the connection can take them; while nothing is queued
/// the connection is suspended, so a waiting stream holds no thread. A reader that does not keep up
/// is dropped once more than `bufferLimit` bytes wait for it: the stream closes, so its producer
/// stops, and the server ends the connection.
public final class EventStream: Sendable {
    /// How the connection's writer stands with the queue.
    enum Read: Equatable {
        /// Bytes copied into the writer's buffer.
        case bytes(Int)
        /// Nothing to write now; the writer has parked the connection (under the stream's lock).
        case parked
        /// Finished and everything written.
        case end
        /// Dropped: the reader fell too far behind.
        case dropped
    }

    private struct State {
        var pending: [UInt8] = []
        var sent = 0
        var finished = false
        var dropped = false
        /// Closed for the producer: finished, dropped, or the connection gone.
        var closed = false
        /// The writer parked the connection and waits for ``wake``.
        var parked = false
        var wake: (@Sendable () -> Void)?
        /// Ends the connection at once (set while it lasts).
        var abort: (@Sendable () -> Void)?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let bufferLimit: Int

    init(bufferLimit: Int) {
        self.bufferLimit = bufferLimit
    }

    /// Queues an event. False when the stream is closed: the reader went away, the server is
    /// stopping, or the reader fell more than the buffer behind (the stream is then dropped).
    @discardableResult
    public func send(_ event: ServerSentEvent) -> Bool {
        enqueue(event.encoded)
    }

    /// Queues a comment line (`: text`), which readers ignore: a heartbeat that keeps proxies from
    /// closing an idle stream and lets the server notice a reader that went away.
    @discardableResult
    public func comment(_ text: String = "") -> Bool {
        enqueue(": \(text.split(whereSeparator: \.isNewline).joined(separator: " "))\n\n")
    }

    /// Ends the stream once what is queued is written. With `retryAfter`, the reader is told first
    /// how long to wait before it reconnects (the `retry:` field, in milliseconds).
    public func finish(retryAfter: Duration? = nil) {
        if let retryAfter {
            let milliseconds =
                retryAfter.components.seconds * 1000 + retryAfter.components.attoseconds / 1_000_000_000_000_000
            _ = enqueue("retry: \(milliseconds)\n\n")
        }
        let (wake, waiters) = state.withLock { state in
            state.finished = true
            return close(&state)
        }
        wake?()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the stream is closed (finished, dropped, or its reader gone).
    public func closed() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.closed { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func enqueue(_ text: String) -> Bool {
        let (accepted, wake, waiters) = state.withLock {
            state -> (Bool, (@Sendable () -> Void)?, [CheckedContinuation<Void, Never>]) in
            guard !state.closed else { return (false, nil, []) }
            state.pending.append(contentsOf: text.utf8)
            if state.pending.count - state.sent > bufferLimit {
                state.dropped = true
                // The writer waits for the reader's socket to take bytes, which it may never do:
                // end the connection now (under the lock, so the connection is still there).
                state.abort?()
                state.abort = nil
                let (wake, waiters) = close(&state)
                return (false, wake, waiters)
            }
            guard state.parked else { return (true, nil, []) }
            state.parked = false
            return (true, state.wake, [])
        }
        wake?()
        for waiter in waiters { waiter.resume() }
        return accepted
    }

    /// Marks the stream closed; the writer's wake-up (if it is parked) and the close waiters to resume.
    private func close(_ state: inout State) -> ((@Sendable () -> Void)?, [CheckedContinuation<Void, Never>]) {
        state.closed = true
        defer { state.closeWaiters = [] }
        let wake = state.parked ? state.wake : nil
        state.parked = false
        return (wake, state.closeWaiters)
    }

    // MARK: The connection's side (HTTPServer)

    /// Called once, before the first read: how to wake a parked connection, and how to end it at once.
    func attach(wake: @escaping @Sendable () -> Void, abort: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.wake = wake
            state.abort = abort
        }
    }

    /// Copies queued bytes into `buffer`; when none are queued and the stream is open, calls `park`
    /// under the stream's lock (so an event queued at the same moment wakes it after).
    func read(into buffer: UnsafeMutableRawBufferPointer, park: () -> Void) -> Read {
        state.withLock { state in
            if state.dropped { return .dropped }
            let available = state.pending.count - state.sent
            if available > 0 {
                let count = min(available, buffer.count)
                state.pending.withUnsafeBytes { bytes in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[state.sent..<state.sent + count]))
                }
                state.sent += count
                if state.sent == state.pending.count {
                    state.pending.removeAll(keepingCapacity: state.pending.count <= 4096)
                    state.sent = 0
                }
                return .bytes(count)
            }
            if state.finished || state.closed { return .end }
            state.parked = true
            park()
            return .parked
        }
    }

    /// The connection is ending: nothing more can be sent.
    func connectionEnded() {
        let waiters = state.withLock { state in
            state.wake = nil
            state.abort = nil
            return close(&state).1
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The streams a server has open, so that a stop can finish them (with a hint to reconnect later)
/// and a heartbeat can reach every one.
final class OpenStreams: Sendable {
    private struct State {
        var streams: [ObjectIdentifier: EventStream] = [:]
        var heartbeat: Task<Void, Never>?
        var stopping = false
    }

    private let state = Mutex(State())
    private let heartbeatEvery: Duration

    init(heartbeatEvery: Duration) {
        self.heartbeatEvery = heartbeatEvery
    }

    /// Adds a stream; false when the server is stopping (the stream is finished at once).
    func add(_ stream: EventStream) -> Bool {
        let added = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.streams[ObjectIdentifier(stream)] = stream
            if state.heartbeat == nil { state.heartbeat = heartbeat() }
            return true
        }
        if !added { stream.finish(retryAfter: .seconds(1)) }
        return added
    }

    func remove(_ stream: EventStream) {
        state.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    var count: Int { state.withLock { $0.streams.count } }

    /// Finishes every stream, telling readers to come back after `retryAfter`; no stream opens after.
    func finishAll(retryAfter: Duration) {
        let (streams, heartbeat) = state.withLock { state in
            state.stopping = true
            defer { state.heartbeat = nil }
            return (Array(state.streams.values), state.heartbeat)
        }
        heartbeat?.cancel()
        for stream in streams { stream.finish(retryAfter: retryAfter) }
    }

    /// One task for every stream of the server (a timer a stream would cost a task each).
    private func heartbeat() -> Task<Void, Never> {
        let every = heartbeatEvery
        return Task { [weak self] in
            while (try? await Task.sleep(for: every)) != nil {
                guard let streams = self?.state.withLock({ Array($0.streams.values) }) else { return }
                for stream in streams { stream.comment() }
            }
        }
    }
}
