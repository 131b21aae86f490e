import Foundation
import NIOCore
import NIOHTTP1

/// One connection: reads requests and misbehaves as told, writing raw bytes.
final class MisbehavingConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private let log: RequestLog
    private let behaviour: @Sendable (MisbehavingService.Request) -> MisbehavingService.Behaviour
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(log: RequestLog, behaviour: @escaping @Sendable (MisbehavingService.Request) -> MisbehavingService.Behaviour) {
        self.log = log
        self.behaviour = behaviour
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let components = URLComponents(string: head.uri)
            var query: [String: String] = [:]
            for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let request = MisbehavingService.Request(
                method: head.method.rawValue, path: components?.path ?? head.uri, query: query, headers: headers,
                body: Data(body))
            log.append(request)
            answer(behaviour(request), context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(_ behaviour: MisbehavingService.Behaviour, context: ChannelHandlerContext) {
        switch behaviour {
        case .json(let status, let text):
            let bytes = Array(text.utf8)
            write(
                "HTTP/1.1 \(status) Answer\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n",
                bytes, context: context)
        case .trickle(let length, let interval):
            write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n", [],
                context: context)
            trickle(left: length, every: .nanoseconds(Int64(interval * 1_000_000_000)), context: context)
        case .endless:
            write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", [],
                context: context)
            pour(left: 256, context: context)
        case .silence:
            break
        case .silentEventStream:
            write(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n", [],
                context: context)
        case .cut(let length, let sent):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
            context.writeAndFlush(
                wrapOutboundOut(ByteBuffer(bytes: Array(head.utf8) + Array(repeating: UInt8(ascii: " "), count: sent)))
            ).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func write(_ head: String, _ body: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: Array(head.utf8) + body)), promise: nil)
    }

    /// One byte, then the rest one at a time, each `interval` after the last (a scheduled task).
    private func trickle(left: Int, every interval: TimeAmount, context: ChannelHandlerContext) {
        guard left > 0 else { return }
        context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            guard context.channel.isActive else { return }
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: "[")), promise: nil)
            self.trickle(left: left - 1, every: interval, context: context)
        }
    }

    /// `left` chunks of 16 KiB, each written once the last one left.
    private func pour(left: Int, context: ChannelHandlerContext) {
        guard left > 0 else { return }
        let chunk = Array("4000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: " "), count: 0x4000) + [13, 10]
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: chunk))).assumeIsolated().whenSuccess {
            self.pour(left: left - 1, context: context)
        }
    }
}
