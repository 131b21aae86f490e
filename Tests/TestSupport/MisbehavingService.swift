import Foundation
import Synchronization

/// A table service that misbehaves on purpose, on 127.0.0.1 and an ephemeral port, over raw
/// sockets (one thread per connection): for faults a real service cannot be made to commit, such as
/// a body that trickles, a body that never ends, or an answer about another item.
///
/// ```swift
/// let service = try MisbehavingService { request in
///     request.method == "POST" ? .json(201, #"{"id":"victim","version":"1"}"#) : .json(404, "{}")
/// }
/// defer { service.stop() }
/// ```
public final class MisbehavingService: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        /// `GET`, `POST`...
        public var method: String
        /// The path without the query.
        public var path: String
        /// The query's parameters, percent-decoded (`$filter`, `$skip`...).
        public var query: [String: String]
        /// The body's bytes.
        public var body: Data
    }

    /// What the service does with a request.
    public enum Behaviour: Sendable {
        /// A complete answer with a JSON body.
        case json(Int, String)
        /// The head (announcing `length` bytes), then one byte every `interval` seconds.
        case trickle(length: Int, interval: Double)
        /// A chunked 200 whose chunks never end.
        case endless
        /// Reads the request and says nothing until the client gives up.
        case silence
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    private let received = Mutex<[Request]>([])

    /// `http://127.0.0.1:PORT`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request so far, in arrival order.
    public var requests: [Request] { received.withLock { $0 } }

    /// Starts listening; `behaviour` decides each answer (it runs on the connection's thread).
    public init(_ behaviour: @escaping @Sendable (Request) -> Behaviour) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTP.Failure() }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw RawHTTP.Failure()
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { break }
                Thread.detachNewThread { [self] in serve(connection, behaviour) }
            }
        }
    }

    /// Stops accepting; open connections end at their next write.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func serve(_ fd: Int32, _ behaviour: @Sendable (Request) -> Behaviour) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        while !stopped.load(ordering: .relaxed) {
            guard let request = readRequest(fd, &buffer) else { return }
            received.withLock { $0.append(request) }
            switch behaviour(request) {
            case .json(let status, let body):
                let bytes = Array(body.utf8)
                let head =
                    "HTTP/1.1 \(status) Answer\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n"
                guard write(fd, Array(head.utf8) + bytes) else { return }
            case .trickle(let length, let interval):
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
                guard write(fd, Array(head.utf8)) else { return }
                for _ in 0..<length {
                    Thread.sleep(forTimeInterval: interval)
                    guard !stopped.load(ordering: .relaxed), write(fd, Array("[".utf8)) else { return }
                }
            case .endless:
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                guard write(fd, Array(head.utf8)) else { return }
                let chunk = Array("4000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: " "), count: 0x4000) + [13, 10]
                while !stopped.load(ordering: .relaxed), write(fd, chunk) {}
                return
            case .silence:
                var scratch = [UInt8](repeating: 0, count: 1024)
                while !stopped.load(ordering: .relaxed) {
                    if scratch.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) <= 0 { return }
                }
                return
            }
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// One request from the connection (head, then a body of `Content-Length` bytes); nil at its end.
    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Request? {
        var scratch = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            buffer += scratch[0..<count]
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<$0 + 4]) == separator }
            }
            if headEnd == nil, !fill() { return nil }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var contentLength = 0
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let bodyStart = headEnd! + 4
        while buffer.count < bodyStart + contentLength {
            if !fill() { return nil }
        }
        let body = Data(buffer[bodyStart..<bodyStart + contentLength])
        buffer.removeFirst(bodyStart + contentLength)
        let target = String(requestLine[1])
        let components = URLComponents(string: target)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return Request(
            method: String(requestLine[0]), path: components?.path ?? target, query: query, body: body)
    }
}
