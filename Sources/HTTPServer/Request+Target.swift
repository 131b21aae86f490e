import Foundation
import HTTPTypes

extension Request {
    /// The request for `target` (a path with its still-encoded query, as in a request line:
    /// `/tables/todo?$filter=a%20eq%201`), decoded as the server decodes what libmicrohttpd reads:
    /// each path segment on its own, query names and values with `+` as a space. What a caller in
    /// the same process answers with ``Responder/respond(to:)``.
    public init(
        method: HTTPRequest.Method, target: String, headers: HTTPFields = [:], body: Data = Data(),
        receivedAt: ContinuousClock.Instant = .now
    ) throws(HTTPError) {
        let bytes = Array(target.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        let segments = try Self.pathSegments(parts[0])
        var query: [(name: String, value: String)] = []
        for pair in parts.dropFirst().first?.split(separator: UInt8(ascii: "&")) ?? [] {
            let nameAndValue = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentDecoding.decode(nameAndValue[0], plusIsSpace: true),
                let value = PercentDecoding.decode(nameAndValue.dropFirst().first ?? [], plusIsSpace: true)
            else { throw Self.queryNotDecodable }
            query.append((name, value))
        }
        self.init(
            method: method, path: "/" + segments.joined(separator: "/"), pathSegments: segments, queryItems: query,
            headers: headers, body: body, receivedAt: receivedAt)
    }

    /// The segments of a path as sent, each percent-decoded on its own (so `%2F` stays inside one).
    static func pathSegments(_ raw: some Collection<UInt8>) throws(HTTPError) -> [String] {
        var segments: [String] = []
        for segment in raw.split(separator: UInt8(ascii: "/")) {
            guard let decoded = PercentDecoding.decode(segment, plusIsSpace: false) else {
                throw HTTPError(.badRequest, "The request path is not valid UTF-8 percent-encoding.")
            }
            segments.append(decoded)
        }
        return segments
    }

    static let queryNotDecodable = HTTPError(.badRequest, "The query string is not valid UTF-8 percent-encoding.")
}
