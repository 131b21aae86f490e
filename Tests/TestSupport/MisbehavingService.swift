import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A table service that misbehaves on purpose, on 127.0.0.1 and an ephemeral port, on swift-nio:
/// for faults a real service cannot be made to commit, such as a body that trickles, a body that
/// never ends, or an answer about another item. Its slowness is scheduled on the event loop, so it
/// holds no thread while it trickles.
///
/// ```swift
/// try await withMisbehavingService(answering: { request in
///     request.method == "POST" ? .json(201, #"{"id":"victim","version":"1"}"#) : .json(404, "{}")
/// }) { service in
///     ...
/// }
/// ```
public final class MisbehavingService: Stoppable {
    /// One request as it arrived.
    public struct Request: Sendable {
        /// `GET`, `POST`...
        public var method: String
        /// The path without the query.
        public var path: String
        /// The query's parameters, percent-decoded (`$filter`, `$skip`...).
        public var query: [String: String]
        /// The headers, by lowercased name.
        public var headers: [String: String]
        /// The body's bytes.
        public var body: Data
    }

    /// What the service does with a request.
    public enum Behaviour: Sendable {
        /// A complete answer with a JSON body.
        case json(Int, String)
        /// The head (announcing `length` bytes), then one byte every `interval` seconds.
        case trickle(length: Int, interval: Double)
        /// A chunked 200 whose chunks never end: 4 MB of them as fast as the client reads, then the
        /// connection stays open without another byte (pouring for ever would reach the client's
        /// size limit first on a loaded machine, where the deadline it tests waits for a thread).
        case endless
        /// Reads the request and says nothing until the client gives up.
        case silence
        /// A 200 announcing `length` bytes of body, then only `sent` of them, then the connection closes.
        case cut(length: Int, sent: Int)
        /// The head of a Server-Sent Events stream, then nothing: not even a heartbeat.
        case silentEventStream
    }

    /// The port it listens on.
    public let port: Int
    private let listener: any Channel
    private let log: RequestLog

    /// `http://127.0.0.1:PORT`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request so far, in arrival order.
    public var requests: [Request] { log.requests }

    /// Returns once `count` requests have arrived (at once if they already did).
    public func requestsArrived(_ count: Int = 1) async {
        await log.arrived(count)
    }

    /// Starts listening; `behaviour` decides each answer (it runs on an event loop: keep it quick).
    public init(_ behaviour: @escaping @Sendable (Request) -> Behaviour) async throws {
        let log = RequestLog()
        listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    log.adopt(channel)
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try channel.pipeline.syncOperations.addHandler(
                        MisbehavingConnectionHandler(log: log, behaviour: behaviour))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
        self.log = log
    }

    /// Stops accepting and closes the open connections.
    public func stop() async {
        try? await listener.close()
        for channel in log.connections { try? await channel.close() }
    }

    deinit {
        listener.close(promise: nil)
        for channel in log.connections { channel.close(promise: nil) }
    }
}

/// Starts a ``MisbehavingService`` whose answers `behaviour` decides, runs `body` with it, then
/// stops it and waits until it has stopped, also when `body` throws (see ``withStopping(_:isolation:_:)``).
public func withMisbehavingService(
    answering behaviour: @escaping @Sendable (MisbehavingService.Request) -> MisbehavingService.Behaviour,
    _ body: (MisbehavingService) async throws -> Void
) async throws {
    try await withStopping(MisbehavingService(behaviour), body)
}

/// The requests a ``MisbehavingService`` received and its open connections.
final class RequestLog: Sendable {
    private struct State {
        var requests: [MisbehavingService.Request] = []
        var connections: [ObjectIdentifier: any Channel] = [:]
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    var requests: [MisbehavingService.Request] { state.withLock { $0.requests } }
    var connections: [any Channel] { state.withLock { Array($0.connections.values) } }

    func append(_ request: MisbehavingService.Request) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.requests.append(request)
            let count = state.requests.count
            defer { state.waiters.removeAll { $0.count <= count } }
            return state.waiters.filter { $0.count <= count }.map(\.continuation)
        }
        for waiter in ready { waiter.resume() }
    }

    func arrived(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.requests.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func adopt(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.connections[id] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.state.withLock { $0.connections.removeValue(forKey: id) }
        }
    }
}
