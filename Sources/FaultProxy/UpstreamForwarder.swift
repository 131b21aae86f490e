import NIOCore
import NIOHTTP1
import NIOPosix

/// Sends requests to the service behind the proxy, each on a fresh connection that closes after
/// the answer (so no request ever meets a connection the service is closing).
struct UpstreamForwarder: Sendable {
    let host: String
    let port: Int
    let group: any EventLoopGroup
    /// How long the service may take to answer before the proxy gives up on it.
    static let answerDeadline = TimeAmount.seconds(60)

    /// Sends `request` on `eventLoop` (one of the group's when nil) and reads the whole answer.
    func send(_ request: ProxiedRequest, on eventLoop: (any EventLoop)? = nil) -> EventLoopFuture<ProxiedResponse> {
        let loop = eventLoop ?? group.next()
        let promise = loop.makePromise(of: ProxiedResponse.self)
        connect(request, on: loop) { UpstreamExchangeHandler(promise: promise) }
            .whenComplete { result in
                switch result {
                case .failure(let error):
                    promise.fail(ProxyFailure.upstream("cannot connect to \(host):\(port): \(error)"))
                case .success(let channel):
                    let deadline = channel.eventLoop.scheduleTask(in: Self.answerDeadline) {
                        channel.close(promise: nil)
                    }
                    promise.futureResult.whenComplete { _ in
                        deadline.cancel()
                        channel.close(promise: nil)
                    }
                }
            }
        return promise.futureResult
    }

    /// Sends `request` and writes the service's answer to `client` as it comes (an event stream does
    /// not end): the head at once, each part of the body as it arrives, and closes `client` when the
    /// service's answer ends or its connection does (or, with `cutAfterFirstPart`, after the first
    /// part: a stream that drops). A client that goes away closes the service's connection.
    func relay(_ request: ProxiedRequest, to client: any Channel, cutAfterFirstPart: Bool) {
        connect(request, on: client.eventLoop) { RelayHandler(client: client, cut: cutAfterFirstPart) }
            .whenComplete { result in
                switch result {
                case .failure:
                    let text = #"{"error":"The proxy could not reach the service."}"#
                    let answer = ProxiedResponse.json(502, text).framed(keepAlive: false)
                    client.writeAndFlush(ByteBuffer(bytes: answer)).whenComplete { _ in client.close(promise: nil) }
                case .success(let upstream):
                    client.closeFuture.whenComplete { _ in upstream.close(promise: nil) }
                }
            }
    }

    /// Opens a fresh connection to the service on `loop` that writes `request` once it is up and
    /// hands the answer to the handler `answerHandler` makes.
    private func connect(
        _ request: ProxiedRequest, on loop: any EventLoop,
        answerHandler: @escaping @Sendable () -> any ChannelInboundHandler
    ) -> EventLoopFuture<any Channel> {
        let (head, body) = (outgoingHead(request), request.body)
        return ClientBootstrap(group: loop)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(RequestWriter(head: head, body: body))
                    try channel.pipeline.syncOperations.addHandler(answerHandler())
                }
            }
            .connect(host: host, port: port)
    }

    /// The client's head for the service: its own `Host`, framing for this hop, and a close after.
    private func outgoingHead(_ request: ProxiedRequest) -> HTTPRequestHead {
        var headers = request.headers
        for name in ProxiedResponse.hopByHop + ["Host"] { headers.remove(name: name) }
        headers.add(name: "Host", value: "\(host):\(port)")
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            headers.add(name: "Content-Length", value: String(request.body.count))
        }
        headers.add(name: "Connection", value: "close")
        return HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.target, headers: headers)
    }
}

/// Writes a request (head, body, end) on a connection to the service as soon as it is up.
private final class RequestWriter: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let body: [UInt8]

    init(head: HTTPRequestHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }
}

/// Collects the service's answer to the request on its connection.
private final class UpstreamExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<ProxiedResponse>
    private var response: ProxiedResponse?
    private var done = false

    init(promise: EventLoopPromise<ProxiedResponse>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            response = ProxiedResponse(status: Int(head.status.code), headers: head.headers)
        case .body(var buffer):
            response?.body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard !done, let response else { return }
            done = true
            promise.succeed(response)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(ProxyFailure.upstream("the service closed the connection without a whole answer"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(ProxyFailure.upstream("\(error)"))
        context.close(promise: nil)
    }

    private func finish(_ failure: ProxyFailure) {
        guard !done else { return }
        done = true
        promise.fail(failure)
    }
}

/// Relays the service's answer, part by part, to the client's connection.
private final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let client: any Channel
    private let cut: Bool

    init(client: any Channel, cut: Bool) {
        self.client = client
        self.cut = cut
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Without a length: the body ends when the connection closes.
            let response = ProxiedResponse(status: Int(head.status.code), headers: head.headers)
            client.writeAndFlush(ByteBuffer(bytes: response.head(bodyLength: nil, keepAlive: false)), promise: nil)
        case .body(let buffer):
            let written = client.writeAndFlush(buffer)
            if cut {
                let client = self.client
                written.whenComplete { _ in client.close(promise: nil) }
                context.close(promise: nil)
            }
        case .end:
            client.close(promise: nil)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Why the proxy could not pass one exchange on.
enum ProxyFailure: Error, CustomStringConvertible {
    case upstream(String)

    var description: String {
        switch self {
        case .upstream(let detail): "upstream: \(detail)"
        }
    }
}
