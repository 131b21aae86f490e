import Foundation
import HTTPTypes

/// One HTTP request, fully received (body included) before a handler sees it.
public struct Request: Sendable {
    public let method: HTTPRequest.Method
    /// The percent-decoded path, such as `/items/a b`.
    public let path: String
    /// The path's segments, each percent-decoded on its own (so `%2F` stays inside a segment).
    public let pathSegments: [String]
    /// Query arguments in order, percent-decoded (`+` is a space).
    public let queryItems: [(name: String, value: String)]
    public let headers: HTTPFields
    public let body: Data
    /// Parameters captured by the matched route pattern (`:id` → `parameters["id"]`).
    public internal(set) var parameters: [String: String] = [:]
    /// Values middleware attaches for later stages (such as a session id).
    public var attributes: [String: String] = [:]
    /// When the request's headers arrived; used for request logs.
    public let receivedAt: ContinuousClock.Instant
    /// The client's numeric address (`192.0.2.7`, `::1`); nil when unknown.
    public var clientAddress: String?

    public init(
        method: HTTPRequest.Method, path: String, pathSegments: [String]? = nil,
        queryItems: [(name: String, value: String)] = [], headers: HTTPFields = [:], body: Data = Data(),
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.path = path
        self.pathSegments = pathSegments ?? path.split(separator: "/").map(String.init)
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
    }

    /// The first value of a query argument.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Cookies sent in the `Cookie` header.
    public var cookies: [String: String] {
        var cookies: [String: String] = [:]
        for value in headers[values: .cookie] {
            for pair in value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if cookies[name] == nil { cookies[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return cookies
    }

    /// The `Host` field, such as `127.0.0.1:8080`: the authority the request was sent to. (swift-http-types
    /// keeps it out of the fields, as `HTTPRequest.authority`; HTTP/1.1 sends it as one.)
    public var authority: String? { headers.value(Self.hostField) }

    /// `Host` (HTTPTypes leaves it out: HTTP/2 sends the authority instead).
    public static let hostField = HTTPField.Name("Host")!

    /// Whether the client prefers JSON over HTML (`Accept` names JSON and not HTML).
    public var prefersJSON: Bool {
        guard let accept = headers[.accept]?.lowercased() else { return false }
        return accept.contains("json") && !accept.contains("text/html")
    }

    /// The body as an `application/x-www-form-urlencoded` form.
    public func form() throws(HTTPError) -> URLEncodedForm {
        try URLEncodedForm(parsing: body)
    }

    /// The body decoded as JSON; a body that does not decode is a 400 whose message says why.
    public func decodeJSON<T: Decodable>(_ type: T.Type = T.self) throws(HTTPError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw HTTPError(.badRequest, "The request body is not the JSON expected: \(Self.describe(error)).")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        case DecodingError.keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "the field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "\(error)"
        }
    }
}
