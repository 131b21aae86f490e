import NIOHTTP1

/// One answer on its way to a client: the service's (from ``ProxyUpstream/forward(_:)``), or one an
/// ``Interceptor`` or a fault made up.
public struct ProxiedResponse: Sendable {
    /// The status code, such as 200.
    public var status: Int
    /// The header fields (the proxy sets the framing fields itself).
    public var headers: HTTPHeaders
    /// The whole body.
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An answer with a JSON body, such as `.json(503, #"{"error":"Down for maintenance."}"#)`.
    public static func json(_ status: Int, _ text: String) -> ProxiedResponse {
        ProxiedResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    /// An answer with a JSON body, such as `.json(503, #"{"error":"Down for maintenance."}"#)`.
    public static func json(_ status: Int, bytes: [UInt8]) -> ProxiedResponse {
        ProxiedResponse(status: status, headers: ["Content-Type": "application/json"], body: bytes)
    }

    /// The first value of the header field `name` (any case).
    public func header(_ name: String) -> String? { headers.first(name: name) }

    /// The fields that frame a message on one connection, which the proxy sets for each hop.
    static let hopByHop = ["Transfer-Encoding", "Content-Length", "Connection", "Keep-Alive", "Proxy-Connection"]

    /// The status line and header fields, with a `Content-Length` of `bodyLength` (none when nil: the
    /// body ends with the connection), ending with the empty line.
    func head(bodyLength: Int?, keepAlive: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n"
        for (name, value) in headers where !Self.hopByHop.contains(where: { $0.lowercased() == name.lowercased() }) {
            text += "\(name): \(value)\r\n"
        }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return Array(text.utf8)
    }

    /// The whole message as bytes on the client's connection.
    func framed(keepAlive: Bool) -> [UInt8] {
        head(bodyLength: body.count, keepAlive: keepAlive) + body
    }
}
