import NIOCore
import NIOPosix
import Synchronization

/// A TCP relay on 127.0.0.1 that passes bytes untouched (TLS included) to a service's port, and
/// moves to another port once it has carried a number of bytes to its clients: the connections open
/// then are closed and every later one reaches the other port. So a client meets a service whose
/// certificate changes while it talks to it, at a point of the exchange the test chooses.
///
/// Written here because the fault proxy speaks HTTP and so cannot pass TLS through.
public final class TCPRelay: Sendable {
    private struct State {
        var target: Int
        /// The port to move to, and after how many bytes sent to clients.
        var move: (port: Int, after: Int)?
        var delivered = 0
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    /// The port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let switchboard: Switchboard

    /// A relay to `target` (a port of 127.0.0.1).
    public init(to target: Int) async throws {
        let switchboard = Switchboard(State(target: target))
        self.switchboard = switchboard
        listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { client in Self.connect(client, switchboard) }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
    }

    /// After `bytes` more bytes have gone to clients (0: now), closes every connection open and sends
    /// the next ones to `port`.
    public func move(to port: Int, afterSending bytes: Int) {
        switchboard.state.withLock { $0.move = (port, $0.delivered + bytes) }
        switchboard.delivered(0)
    }

    /// Stops listening and closes every connection.
    public func stop() async {
        let open = switchboard.state.withLock { Array($0.channels.values) }
        for channel in open { channel.close(promise: nil) }
        try? await listener.close()
    }

    /// Where connections go, and those open.
    private final class Switchboard: Sendable {
        let state: Mutex<State>

        init(_ state: State) { self.state = Mutex(state) }

        func track(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            state.withLock { $0.channels[id] = channel }
            channel.closeFuture.whenComplete { _ in _ = self.state.withLock { $0.channels.removeValue(forKey: id) } }
        }

        /// Bytes sent to a client: once the move's count is reached, every connection closes.
        func delivered(_ count: Int) {
            let closing = state.withLock { state -> [any Channel] in
                state.delivered += count
                guard let move = state.move, state.delivered >= move.after else { return [] }
                state.target = move.port
                state.move = nil
                return Array(state.channels.values)
            }
            for channel in closing { channel.close(promise: nil) }
        }
    }

    private static func connect(_ client: any Channel, _ switchboard: Switchboard) -> EventLoopFuture<Void> {
        let target = switchboard.state.withLock { $0.target }
        switchboard.track(client)
        return ClientBootstrap(group: client.eventLoop)
            .channelOption(.autoRead, value: false)
            .connect(host: "127.0.0.1", port: target)
            .flatMap { upstream in
                switchboard.track(upstream)
                return client.eventLoop.makeCompletedFuture {
                    let (toClient, toService) = (Forward(counting: switchboard.delivered), Forward(counting: { _ in }))
                    try upstream.pipeline.syncOperations.addHandler(toClient)
                    try client.pipeline.syncOperations.addHandler(toService)
                    toClient.partner = client
                    toService.partner = upstream
                    upstream.setOption(.autoRead, value: true).whenComplete { _ in }
                    client.setOption(.autoRead, value: true).whenComplete { _ in }
                }
            }
    }

    /// Passes what one side reads to the other (both on one event loop), and closes the other
    /// side when this one closes.
    private final class Forward: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var partner: (any Channel)?
        private let counting: @Sendable (Int) -> Void

        init(counting: @escaping @Sendable (Int) -> Void) { self.counting = counting }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            partner?.writeAndFlush(buffer, promise: nil)
            counting(buffer.readableBytes)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner?.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
