import Foundation
import NIOCore
import NIOPosix

/// Sends raw bytes to a loopback port and reads until the server closes the connection or the
/// deadline passes: for requests AsyncHTTPClient refuses to make (a body on GET, a foreign `Host`,
/// malformed bytes). On swift-nio, so a wait holds no thread.
///
/// Send `Connection: close` to read one answer: the server closes after it. The deadline only
/// guards against a server that never does, so by default it is as long as a loaded machine needs.
public enum RawHTTP {
    /// The connection could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `text` and returns everything the server wrote back (as UTF-8) before it closed the
    /// connection or `deadline` passed.
    public static func send(port: Int, _ text: String, deadline: Duration = .seconds(60)) async throws -> String {
        try await send(port: port, Data(text.utf8), deadline: deadline)
    }

    /// Sends `bytes` and returns everything the server wrote back (as UTF-8) before it closed the
    /// connection or `deadline` passed.
    public static func send(port: Int, _ bytes: Data, deadline: Duration = .seconds(60)) async throws -> String {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let received = loop.makePromise(of: [UInt8].self)
        do {
            // The bytes go out from the event loop as soon as the connection is made: a busy
            // cooperative pool must not hold them back until the server drops the idle connection.
            _ = try await ClientBootstrap(group: loop)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            Exchange(sending: bytes, received: received, deadline: deadline))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
        } catch {
            received.fail(error)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): \(error)")
        }
        return String(decoding: try await received.futureResult.get(), as: UTF8.self)
    }
}

/// Sends the bytes once connected, then keeps every byte read until the connection closes or the
/// deadline passes.
private final class Exchange: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let sending: Data
    private let received: EventLoopPromise<[UInt8]>
    private let deadline: Duration
    private var bytes: [UInt8] = []
    private var timer: Scheduled<Void>?

    init(sending: Data, received: EventLoopPromise<[UInt8]>, deadline: Duration) {
        self.sending = sending
        self.received = received
        self.deadline = deadline
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(
            in: .nanoseconds(Int64(deadline.components.seconds) * 1_000_000_000)
        ) { channel.close(promise: nil) }
        // A server may close before it read everything: what it answered still counts.
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: sending)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        received.succeed(bytes)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset after the answer: keep what arrived.
        context.close(promise: nil)
    }
}
