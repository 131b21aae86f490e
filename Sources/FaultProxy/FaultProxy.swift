import Foundation
import Synchronization

/// An HTTP proxy on 127.0.0.1 that forwards to a service on loopback and injects faults into
/// chosen exchanges: delays, refused and reset connections, 5xx answers, lost acknowledgements,
/// truncated or corrupted bodies, duplicated requests.
///
/// It listens on a raw socket (not libmicrohttpd) because a reset mid-response needs control of
/// the client's TCP connection; each connection has its own thread, so blocking I/O never ties up
/// Swift's cooperative pool. Each request is forwarded on a fresh upstream connection.
///
/// ```swift
/// let proxy = try FaultProxy(upstream: service.url, plan: .always(.dropResponse, probability: 0.3, seed: 7))
/// // point the client at proxy.url ...
/// proxy.setPlan(.passThrough)
/// proxy.stop()
/// ```
public final class FaultProxy: Sendable {
    /// The port the proxy listens on (the real one when started on port 0).
    public let port: Int
    /// The service's address, such as `http://127.0.0.1:8090`.
    public let upstream: String
    private let upstreamHost: String
    private let upstreamPort: Int
    /// nil while connections are refused (see ``refuseConnections(_:)``).
    private let listener: Mutex<ListeningSocket?>
    private let state: Mutex<State>
    private let connections = Mutex<[Int32: Bool]>([:])

    private struct State {
        var chooser: FaultChooser
        var sequence = 0
        var events: [ProxyEvent] = []
        var stopped = false
    }

    /// Starts listening on `127.0.0.1:port` (0 picks a free port) and forwarding to `upstream`.
    public init(upstream: String, port: Int = 0, plan: FaultPlan = .passThrough) throws(FaultProxyError) {
        guard let url = URL(string: upstream), url.scheme == "http", let host = url.host,
            ["127.0.0.1", "localhost"].contains(host.lowercased())
        else { throw .upstreamNotLoopback(upstream) }
        guard (0...65535).contains(port) else { throw .cannotListen("port \(port) is out of range") }
        upstreamHost = "127.0.0.1"
        upstreamPort = url.port ?? 80
        self.upstream = "http://127.0.0.1:\(upstreamPort)"
        let socket: ListeningSocket
        do { socket = try ListeningSocket(host: "127.0.0.1", port: port) } catch {
            throw .cannotListen(error.description)
        }
        self.port = socket.port
        listener = Mutex(socket)
        state = Mutex(State(chooser: FaultChooser(plan)))
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop(socket) }
    }

    /// Stops listening (new connections are refused by the system: `ECONNREFUSED`) and drops the
    /// open ones; `false` listens again on the same port.
    public func refuseConnections(_ refusing: Bool) throws(FaultProxyError) {
        if refusing {
            listener.withLock { socket in
                socket?.shutdown()
                socket = nil
            }
            for descriptor in connections.withLock({ Array($0.keys) }) { _ = shutdownDescriptor(descriptor) }
            return
        }
        let opened: ListeningSocket?
        do {
            opened = try listener.withLock {
                (current: inout ListeningSocket?) throws(SocketError) -> ListeningSocket? in
                guard current == nil else { return nil }
                current = try ListeningSocket(host: "127.0.0.1", port: port)
                return current
            }
        } catch {
            throw .cannotListen(error.description)
        }
        guard let socket = opened else { return }
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop(socket) }
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Replaces the rules (counters and the random sequence restart from the new plan's seed).
    public func setPlan(_ plan: FaultPlan) {
        state.withLock { $0.chooser = FaultChooser(plan) }
    }

    /// The plan in use.
    public var plan: FaultPlan { state.withLock { $0.chooser.plan } }

    /// Every request so far, in the order the proxy read them.
    public var events: [ProxyEvent] { state.withLock { $0.events } }

    /// Called with each event as it happens (for the command's log); nil for silence.
    public func onEvent(_ handler: (@Sendable (ProxyEvent) -> Void)?) {
        eventHandler.withLock { $0 = handler }
    }
    private let eventHandler = Mutex<(@Sendable (ProxyEvent) -> Void)?>(nil)

    /// Stops accepting and closes open client connections. Safe to call more than once.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        listener.withLock { $0?.shutdown() }
        let open = connections.withLock { Array($0.keys) }
        for descriptor in open { _ = shutdownDescriptor(descriptor) }
    }

    deinit { stop() }

    // MARK: Serving

    private func acceptLoop(_ listener: ListeningSocket) {
        while let descriptor = listener.accept() {
            if state.withLock({ $0.stopped }) {
                Socket(descriptor: descriptor).close()
                break
            }
            connections.withLock { $0[descriptor] = true }
            let proxy = self
            Thread.detachNewThread {
                proxy.serve(Socket(descriptor: descriptor))
                proxy.connections.withLock { $0[descriptor] = nil }
            }
        }
    }

    /// Serves one client connection: requests one after another (keep-alive) until it closes.
    private func serve(_ client: Socket) {
        client.setTimeout(seconds: 120)
        let reader = MessageReader(socket: client)
        while true {
            let request: HTTPMessage
            do {
                guard let next = try reader.readRequest() else { return client.close() }
                request = next
            } catch {
                return client.close()
            }
            let keepAlive = request.header("Connection")?.lowercased() != "close"
            let path = String(request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let (sequence, fault) = state.withLock { state -> (Int, Fault) in
                state.sequence += 1
                return (state.sequence, state.chooser.choose(method: request.method, path: path))
            }
            var event = ProxyEvent(
                sequence: sequence, method: request.method, path: path, fault: fault, upstreamStatus: nil, failure: nil)
            let open = handle(request, fault: fault, client: client, keepAlive: keepAlive, event: &event)
            state.withLock { $0.events.append(event) }
            eventHandler.withLock { $0 }?(event)
            guard open, keepAlive else { return client.close() }
        }
    }

    /// Applies `fault` to one exchange; false when the client connection is finished.
    private func handle(
        _ request: HTTPMessage, fault: Fault, client: Socket, keepAlive: Bool, event: inout ProxyEvent
    ) -> Bool {
        switch fault {
        case .refuse:
            client.reset()
            return false
        case .status(let code):
            let body = Array(
                #"{"error":"Injected fault: the proxy answered \#(code) without asking the service."}"#.utf8)
            let response = HTTPMessage(
                startLine: "HTTP/1.1 \(code) Injected Fault", headers: [("Content-Type", "application/json")],
                body: body)
            return send(response.framed(keepAlive: keepAlive), to: client)
        case .delay(let milliseconds):
            Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
        default:
            break
        }

        let response: HTTPMessage
        do {
            var first = try forward(request)
            event.upstreamStatus = first.status
            if fault == .duplicate { first = try forward(request) }
            response = first
        } catch {
            event.failure = error.description
            let body = Array(#"{"error":"The proxy could not reach the service: \#(error.description)"}"#.utf8)
            let failure = HTTPMessage(
                startLine: "HTTP/1.1 502 Bad Gateway", headers: [("Content-Type", "application/json")], body: body)
            return send(failure.framed(keepAlive: keepAlive), to: client)
        }

        switch fault {
        case .dropResponse:
            client.close()
            return false
        case .resetMidResponse:
            let framed = response.framed(keepAlive: keepAlive)
            let bytes = framed.head + framed.body
            let cut = framed.body.isEmpty ? framed.head.count / 2 : framed.head.count + framed.body.count / 2
            try? client.write(bytes.prefix(cut))
            client.reset()
            return false
        case .truncateBody:
            var cut = response
            cut.body = Array(response.body.prefix(response.body.count / 2))
            return send(cut.framed(keepAlive: keepAlive), to: client)
        case .corruptBody:
            var garbled = response
            garbled.body = Self.corrupt(response.body, seed: UInt64(event.sequence))
            return send(garbled.framed(keepAlive: keepAlive), to: client)
        default:
            return send(response.framed(keepAlive: keepAlive), to: client)
        }
    }

    /// Sends `request` to the service on a new connection and reads its whole answer.
    private func forward(_ request: HTTPMessage) throws(ProxyFailure) -> HTTPMessage {
        let socket: Socket
        do { socket = try Socket.connect(host: upstreamHost, port: upstreamPort) } catch {
            throw .upstream(error.description)
        }
        defer { socket.close() }
        var outgoing = request.framed(keepAlive: false)
        outgoing.setHeader("Host", "\(upstreamHost):\(upstreamPort)")
        if request.body.isEmpty, !["POST", "PUT", "PATCH"].contains(request.method) {
            outgoing.setHeader("Content-Length", nil)
        }
        do { try socket.write(outgoing.head + outgoing.body) } catch { throw .upstream(error.description) }
        return try MessageReader(socket: socket).readResponse(to: request.method)
    }

    private func send(_ message: HTTPMessage, to client: Socket) -> Bool {
        do {
            try client.write(message.head + message.body)
            return true
        } catch {
            client.close()
            return false
        }
    }

    /// The body with about one byte in eight replaced, and its first byte made invalid JSON.
    static func corrupt(_ body: [UInt8], seed: UInt64) -> [UInt8] {
        guard !body.isEmpty else { return Array("\u{1}".utf8) }
        var random = SplitMix64(seed: seed)
        var bytes = body
        bytes[0] = UInt8(ascii: "#")
        for index in bytes.indices.dropFirst() where random.next() % 8 == 0 {
            bytes[index] = UInt8(truncatingIfNeeded: random.next() | 0x80)
        }
        return bytes
    }
}
