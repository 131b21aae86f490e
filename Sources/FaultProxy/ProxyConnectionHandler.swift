import NIOCore
import NIOHTTP1

/// One client connection to the proxy: it reads requests one after another (keep-alive), has
/// each exchange decided by the proxy, and performs the resulting ``ClientAction``.
///
/// Requests are answered in the order they arrive: one that comes while another is being
/// decided waits its turn (HTTP/1.1 pipelining). An exchange never holds the event loop: a delay is
/// a scheduled task and an interceptor runs as a task of its own.
final class ProxyConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// Decides one exchange; the future completes on the connection's event loop.
    typealias Exchange = @Sendable (ProxiedRequest, any EventLoop) -> EventLoopFuture<ClientAction>

    private let exchange: Exchange
    /// Where event streams are relayed from.
    private let forwarder: UpstreamForwarder
    private var reading: ProxiedRequest?
    private var waiting: [ProxiedRequest] = []
    private var busy = false
    private var open = true

    init(exchange: @escaping Exchange, forwarder: UpstreamForwarder) {
        self.exchange = exchange
        self.forwarder = forwarder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = ProxiedRequest(method: head.method.rawValue, target: head.uri, headers: head.headers)
            if !head.isKeepAlive { reading?.headers.replaceOrAdd(name: "Connection", value: "close") }
        case .body(var buffer):
            reading?.body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let request = reading else { return }
            reading = nil
            waiting.append(request)
            startNext(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        open = false
        waiting.removeAll()
        context.fireChannelInactive()
    }

    /// A connection idle for ``FaultProxy/idleTimeout`` between requests is closed; one whose
    /// answer is delayed or withheld stays open until its client gives up.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
            return context.fireUserInboundEventTriggered(event)
        }
        if !busy, reading == nil { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Malformed HTTP, or the client went away: nothing to answer.
        context.close(promise: nil)
    }

    private func startNext(context: ChannelHandlerContext) {
        guard open, !busy, !waiting.isEmpty else { return }
        busy = true
        let request = waiting.removeFirst()
        exchange(request, context.eventLoop).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let action): self.perform(action, context: context)
            case .failure: context.close(promise: nil)
            }
        }
    }

    private func perform(_ action: ClientAction, context: ChannelHandlerContext) {
        guard open else { return }
        switch action {
        case .send(let bytes, let close):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).assumeIsolated().whenComplete { result in
                guard case .success = result, !close else { return context.close(promise: nil) }
                self.busy = false
                self.startNext(context: context)
            }
        case .sendThenReset(let bytes):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).assumeIsolated().whenComplete { _ in
                Self.reset(context.channel)
            }
        case .close:
            context.close(promise: nil)
        case .withhold:
            break
        case .relay(let request, let cut):
            forwarder.relay(request, to: context.channel, cutAfterFirstPart: cut)
        }
    }

    /// Closes with a reset (RST): `SO_LINGER` 0 throws away unsent data, and the peer sees
    /// "connection reset by peer".
    private static func reset(_ channel: any Channel) {
        guard let options = channel as? any SocketOptionProvider else { return channel.close(promise: nil) }
        options.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}
