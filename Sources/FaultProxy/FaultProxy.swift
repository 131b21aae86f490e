import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP proxy on 127.0.0.1 that forwards to a service on loopback and injects faults into
/// chosen exchanges: delays, refused and reset connections, 5xx answers, lost acknowledgements,
/// truncated or corrupted bodies, duplicated requests. Tests may also take over single exchanges
/// with an ``Interceptor``.
///
/// It runs on swift-nio's event loops: many keep-alive connections at once, none of them held up
/// by another's delay (a scheduled task) or by an interceptor (a task of its own). Each request is
/// forwarded on a fresh connection to the service.
///
/// ```swift
/// let proxy = try await FaultProxy(upstream: service.url, plan: .always(.dropResponse, probability: 0.3, seed: 7))
/// // point the client at proxy.url ...
/// proxy.setPlan(.passThrough)
/// await proxy.stop()
/// ```
public final class FaultProxy: Sendable {
    /// The port the proxy listens on (the real one when started on port 0).
    public let port: Int
    /// Whether ``port`` was picked here (port 0), and is kept from the other proxies until ``stop()``.
    private let picked: Bool
    /// The service's address, such as `http://127.0.0.1:8090`.
    public let upstream: String
    let forwarder: UpstreamForwarder
    private let group: any EventLoopGroup
    private let state: Mutex<State>

    private struct State {
        var chooser: FaultChooser
        var events: [ProxyEvent] = []
        var interceptor: Interceptor?
        var onEvent: (@Sendable (ProxyEvent) -> Void)?
        /// nil while connections are refused (see ``refuseConnections(_:)``) or after ``stop()``.
        var listener: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
    }

    /// Starts listening on `127.0.0.1:port` and forwarding to `upstream`. Port 0 picks a free port
    /// below the system's range for outgoing connections, so that ``refuseConnections(_:)`` can
    /// always listen on it again.
    public init(upstream: String, port: Int = 0, plan: FaultPlan = .passThrough) async throws(FaultProxyError) {
        guard let url = URL(string: upstream), url.scheme == "http", let host = url.host,
            ["127.0.0.1", "localhost"].contains(host.lowercased())
        else { throw .upstreamNotLoopback(upstream) }
        guard (0...65535).contains(port) else { throw .cannotListen("port \(port) is out of range") }
        group = MultiThreadedEventLoopGroup.singleton
        forwarder = UpstreamForwarder(host: "127.0.0.1", port: url.port ?? 80, group: group)
        self.upstream = "http://127.0.0.1:\(forwarder.port)"
        state = Mutex(State(chooser: FaultChooser(plan)))
        let listener =
            try await port == 0 ? Self.listenOnFreePort(group: group) : Self.listen(on: port, group: group, proxy: nil)
        self.port = listener.channel.localAddress?.port ?? port
        picked = port == 0
        state.withLock { $0.listener = listener.channel }
        listener.attach(self)
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// How long a client's connection may stay idle between requests before the proxy closes it.
    public static let idleTimeout = TimeAmount.seconds(120)

    /// Replaces the rules (counters and the random sequence restart from the new plan's seed).
    public func setPlan(_ plan: FaultPlan) {
        state.withLock { $0.chooser = FaultChooser(plan) }
    }

    /// The plan in use.
    public var plan: FaultPlan { state.withLock { $0.chooser.plan } }

    /// Every request so far, in the order the proxy read them (an exchange still under way shows
    /// without its outcome).
    public var events: [ProxyEvent] { state.withLock { $0.events } }

    /// Called with each event once its exchange is decided (for the command's log); nil for silence.
    public func onEvent(_ handler: (@Sendable (ProxyEvent) -> Void)?) {
        state.withLock { $0.onEvent = handler }
    }

    /// Hands every request to `interceptor` before the plan (see ``Interceptor``); nil removes it.
    public func intercept(_ interceptor: Interceptor?) {
        state.withLock { $0.interceptor = interceptor }
    }

    /// Stops listening (new connections are refused by the system: `ECONNREFUSED`) and drops the
    /// open ones; `false` listens again on the same port.
    public func refuseConnections(_ refusing: Bool) async throws(FaultProxyError) {
        if refusing {
            let channels = state.withLock { state in
                defer { state.listener = nil }
                return [state.listener].compactMap { $0 } + state.connections.values
            }
            for channel in channels { try? await channel.close() }
            return
        }
        guard state.withLock({ $0.listener == nil && !$0.stopped }) else { return }
        let listener = try await Self.listen(on: port, group: group, proxy: self)
        let kept = state.withLock { state -> Bool in
            guard state.listener == nil, !state.stopped else { return false }
            state.listener = listener.channel
            return true
        }
        if !kept { try? await listener.channel.close() }
    }

    /// Stops accepting and closes open client connections. Safe to call more than once.
    public func stop() async {
        let (channels, wasStopped) = state.withLock { state in
            defer {
                state.stopped = true
                state.listener = nil
            }
            return ([state.listener].compactMap { $0 } + state.connections.values, state.stopped)
        }
        for channel in channels { try? await channel.close() }
        if !wasStopped { releasePort() }
    }

    deinit {
        let (channels, stopped) = state.withLock {
            ([$0.listener].compactMap { $0 } + $0.connections.values, $0.stopped)
        }
        for channel in channels { channel.close(promise: nil) }
        if !stopped { releasePort() }
    }

    /// Lets another proxy of this process pick ``port`` (once: after the stop, or at the end).
    private func releasePort() {
        if picked { Self.pickedPorts.withLock { _ = $0.remove(port) } }
    }

    // MARK: Events

    /// Numbers a request, chooses its fault and records it; returns the interceptor to ask.
    func record(_ request: ProxiedRequest) -> (sequence: Int, fault: Fault, interceptor: Interceptor?) {
        state.withLock { state in
            let sequence = state.events.count + 1
            let fault = state.chooser.choose(method: request.method, path: request.path)
            state.events.append(
                ProxyEvent(
                    sequence: sequence, method: request.method, path: request.path, fault: fault,
                    upstreamStatus: nil, failure: nil))
            return (sequence, fault, state.interceptor)
        }
    }

    /// Records how an exchange ended, and tells the event handler.
    func finish(_ sequence: Int, fault: Fault, upstreamStatus: Int?, failure: String?) {
        let (event, handler) = state.withLock { state -> (ProxyEvent, (@Sendable (ProxyEvent) -> Void)?) in
            state.events[sequence - 1].fault = fault
            state.events[sequence - 1].upstreamStatus = upstreamStatus
            state.events[sequence - 1].failure = failure
            return (state.events[sequence - 1], state.onEvent)
        }
        handler?(event)
    }

    // MARK: Listening

    /// A bound listener whose connections are served by the proxy once it is attached (the first
    /// listener is bound before the proxy is fully initialised).
    private struct Listener {
        let channel: any Channel
        let owner: ProxyReference

        func attach(_ proxy: FaultProxy) { owner.set(proxy) }
    }

    /// Listens on a free port below the system's range of ephemeral ports. A port from that range
    /// (what binding port 0 gives) may be taken as the local port of any outgoing connection while
    /// ``refuseConnections(_:)`` has it closed, and the proxy could not listen on it again; ports
    /// below the range are only ever taken by a program that asks for them by number.
    private static func listenOnFreePort(group: any EventLoopGroup) async throws(FaultProxyError) -> Listener {
        let ephemeral =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
        let candidates = 1024..<max(ephemeral, 2048)
        var lastFailure = FaultProxyError.cannotListen("no free port below \(candidates.upperBound)")
        for _ in 0..<64 {
            let port = Int.random(in: candidates)
            guard pickedPorts.withLock({ $0.insert(port).inserted }) else { continue }
            do {
                return try await listen(on: port, group: group, proxy: nil)
            } catch {
                pickedPorts.withLock { _ = $0.remove(port) }
                lastFailure = error
            }
        }
        throw lastFailure
    }

    /// The ports picked by the proxies of this process that have not stopped, refusing connections or
    /// not: while one refuses, its port is free, and another proxy must not take it.
    private static let pickedPorts = Mutex<Set<Int>>([])

    private static func listen(
        on port: Int, group: any EventLoopGroup, proxy: FaultProxy?
    ) async throws(FaultProxyError) -> Listener {
        let owner = ProxyReference(proxy)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let proxy = owner.proxy else { throw ChannelError.ioOnClosedChannel }
                        try proxy.adopt(channel)
                    }
                }
                .bind(host: "127.0.0.1", port: port).get()
            return Listener(channel: channel, owner: owner)
        } catch {
            throw .cannotListen("127.0.0.1:\(port): \(error)")
        }
    }

    /// Sets up a new client connection's pipeline and keeps track of it until it closes.
    private func adopt(_ channel: any Channel) throws {
        let id = ObjectIdentifier(channel)
        let accepted = state.withLock { state -> Bool in
            guard !state.stopped, state.listener != nil else { return false }
            state.connections[id] = channel
            return true
        }
        guard accepted else { throw ChannelError.ioOnClosedChannel }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.state.withLock { $0.connections.removeValue(forKey: id) }
        }
        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: Self.idleTimeout))
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        try channel.pipeline.syncOperations.addHandler(
            ProxyConnectionHandler(
                exchange: { [weak self] request, eventLoop in
                    guard let self else { return eventLoop.makeSucceededFuture(.close) }
                    return self.exchange(request, on: eventLoop)
                }, forwarder: forwarder))
    }
}

/// The proxy a listener serves, set once the proxy exists; weak, so that a proxy dropped without
/// ``FaultProxy/stop()`` is freed (and closes its channels).
private final class ProxyReference: Sendable {
    private struct Weak: Sendable {
        weak var proxy: FaultProxy?
    }
    private let reference: Mutex<Weak>

    init(_ proxy: FaultProxy?) { reference = Mutex(Weak(proxy: proxy)) }
    func set(_ proxy: FaultProxy) { reference.withLock { $0.proxy = proxy } }
    var proxy: FaultProxy? { reference.withLock { $0.proxy } }
}
