import Foundation

/// One HTTP/1.1 request or response as the proxy sees it: the start line, the header fields in
/// order, and the whole body (chunked bodies are decoded).
struct HTTPMessage {
    /// `GET /tables/todoitem HTTP/1.1` or `HTTP/1.1 200 OK`.
    var startLine: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    mutating func setHeader(_ name: String, _ value: String?) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        if let value { headers.append((name, value)) }
    }

    /// The request method (first word of a request line).
    var method: String { String(startLine.split(separator: " ").first ?? "") }
    /// The request target, such as `/tables/todoitem?$top=5`.
    var target: String {
        let parts = startLine.split(separator: " ")
        return parts.count > 1 ? String(parts[1]) : "/"
    }
    /// The response status (second word of a status line).
    var status: Int {
        let parts = startLine.split(separator: " ")
        return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }

    /// Start line and header fields, ending with the empty line.
    var head: [UInt8] {
        var text = startLine + "\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The message with a `Content-Length` matching `body` (and no hop-by-hop framing fields).
    func framed(keepAlive: Bool) -> HTTPMessage {
        var message = self
        for name in ["Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection"] {
            message.setHeader(name, nil)
        }
        message.setHeader("Content-Length", String(body.count))
        message.setHeader("Connection", keepAlive ? "keep-alive" : "close")
        return message
    }
}

/// Reads HTTP messages from a socket, keeping what was read past the end of one message.
final class MessageReader {
    let socket: Socket
    private var buffer: [UInt8] = []
    static let headLimit = 64 * 1024
    static let bodyLimit = 64 * 1024 * 1024

    init(socket: Socket) { self.socket = socket }

    /// The next request; nil when the peer closed the connection between requests.
    func readRequest() throws(ProxyFailure) -> HTTPMessage? {
        guard var message = try readHead() else { return nil }
        message.body = try readBody(of: message, isResponse: false, requestMethod: nil)
        return message
    }

    /// The response to a request made with `method`.
    func readResponse(to method: String) throws(ProxyFailure) -> HTTPMessage {
        guard var message = try readHead() else {
            throw .upstream("the service closed the connection without answering")
        }
        message.body = try readBody(of: message, isResponse: true, requestMethod: method)
        return message
    }

    private func fill() throws(ProxyFailure) -> Bool {
        let bytes: [UInt8]
        do { bytes = try socket.read() } catch { throw .connection(error.description) }
        buffer += bytes
        return !bytes.isEmpty
    }

    private func readHead() throws(ProxyFailure) -> HTTPMessage? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = Self.find(terminator, in: buffer) {
                let text = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let start = lines.removeFirst()
                var headers: [(String, String)] = []
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line without a colon") }
                    headers.append(
                        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                    )
                }
                return HTTPMessage(startLine: start, headers: headers, body: [])
            }
            guard buffer.count < Self.headLimit else { throw .malformed("the header block is over 64 KiB") }
            guard try fill() else {
                if buffer.isEmpty { return nil }
                throw .connection("the peer closed the connection in the middle of a header block")
            }
        }
    }

    private func readBody(
        of message: HTTPMessage, isResponse: Bool, requestMethod: String?
    ) throws(ProxyFailure)
        -> [UInt8]
    {
        if isResponse {
            let status = message.status
            if requestMethod == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) { return [] }
        }
        if message.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            return try readChunked()
        }
        if let length = message.header("Content-Length") {
            guard let count = Int(length), count >= 0, count <= Self.bodyLimit else {
                throw .malformed("Content-Length '\(length)' is not a size the proxy accepts")
            }
            return try take(count)
        }
        guard isResponse else { return [] }
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    private func take(_ count: Int) throws(ProxyFailure) -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw .connection("the peer closed the connection before the end of the body") }
        }
        let bytes = Array(buffer.prefix(count))
        buffer.removeFirst(count)
        return bytes
    }

    private func line() throws(ProxyFailure) -> String {
        while true {
            if let end = Self.find([13, 10], in: buffer) {
                let text = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return text
            }
            guard buffer.count < Self.headLimit, try fill() else { throw .malformed("a chunk size line never ended") }
        }
    }

    private func readChunked() throws(ProxyFailure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeText = try line().split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0,
                body.count + size <= Self.bodyLimit
            else { throw .malformed("bad chunk size '\(sizeText)'") }
            if size == 0 {
                while try !line().isEmpty {}
                return body
            }
            body += try take(size)
            _ = try take(2)
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}

/// Why the proxy could not pass one exchange on.
enum ProxyFailure: Error, CustomStringConvertible {
    case connection(String)
    case malformed(String)
    case upstream(String)

    var description: String {
        switch self {
        case .connection(let detail): "connection: \(detail)"
        case .malformed(let detail): "malformed HTTP: \(detail)"
        case .upstream(let detail): "upstream: \(detail)"
        }
    }
}
