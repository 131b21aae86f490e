import Foundation
import NIOHTTP1

/// One request as the proxy read it from a client: what an ``Interceptor`` sees, and may change
/// before it forwards the request with ``ProxyUpstream/forward(_:)``.
public struct ProxiedRequest: Sendable, Equatable {
    /// `GET`, `POST`...
    public var method: String
    /// The request target as sent: the path and the query, such as `/tables/todoitem?$top=5`.
    public var target: String
    /// The header fields as sent (the proxy sets `Host` and the framing fields when it forwards).
    public var headers: HTTPHeaders
    /// The whole body (chunked bodies are decoded).
    public var body: [UInt8]

    public init(method: String, target: String, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The path without the query string.
    public var path: String {
        String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
    }

    /// The query's parameters, percent-decoded; setting them re-encodes the query of ``target``.
    public var queryItems: [URLQueryItem] {
        get { URLComponents(string: target)?.queryItems ?? [] }
        set {
            guard var components = URLComponents(string: target) else { return }
            components.queryItems = newValue.isEmpty ? nil : newValue
            // `+` is a space to some servers: spell it out as the client would.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
            target = components.string ?? target
        }
    }

    /// The first value of the header field `name` (any case).
    public func header(_ name: String) -> String? { headers.first(name: name) }

    /// Whether the client wants the connection kept open after the answer.
    var keepAlive: Bool { header("Connection")?.lowercased() != "close" }

    /// A request for Server-Sent Events, whose answer does not end: relayed as it comes.
    var wantsEventStream: Bool { header("Accept")?.contains("text/event-stream") == true }
}
