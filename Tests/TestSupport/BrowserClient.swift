import Foundation
import HTTPServer
import HTTPTypes

/// A browser-like client for the dashboard's pages: keeps cookies (the session and CSRF ones),
/// never follows redirects, and sends forms and JSON.
public final class BrowserClient: Sendable {
    /// The address paths are relative to, such as `http://127.0.0.1:8080`.
    public let base: String
    private let http: TestHTTPClient
    /// The router of the server at `base`, when requests go through it in process.
    private let responder: Responder?

    /// - Parameters:
    ///   - caFile: CAs trusted besides the system's, for a dashboard speaking HTTPS.
    ///   - responder: the router of the server at `base`: requests then go through it in process
    ///     (``TestHTTPClient/send(_:_:headers:body:through:)``), not over the socket.
    public init(base: String, caFile: String? = nil, responder: Responder? = nil) {
        self.base = base
        http = TestHTTPClient(keepsCookies: true, caFile: caFile)
        self.responder = responder
    }

    /// Sends a request to `base + path`, with `form` URL-encoded or `json` as the body.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, form: [String: String]? = nil, json: Data? = nil,
        headers: HTTPFields = [:]
    ) async throws -> TestHTTPClient.Answer {
        var fields = HTTPFields()
        var body: Data?
        if let form {
            fields[.contentType] = "application/x-www-form-urlencoded"
            body = Data(
                form.map { "\(PercentDecoding.encode($0.key))=\(PercentDecoding.encode($0.value))" }
                    .joined(separator: "&").utf8)
        }
        if let json {
            fields[.contentType] = "application/json"
            body = json
        }
        fields.append(contentsOf: headers)
        return try await exchange(method, path, fields, body)
    }

    /// Posts a URL-encoded form whose fields may repeat (`id=1&id=2`, as ticked checkboxes send them).
    public func post(_ path: String, pairs: [(String, String)]) async throws -> TestHTTPClient.Answer {
        var fields = HTTPFields()
        fields[.contentType] = "application/x-www-form-urlencoded"
        let body = pairs.map { "\(PercentDecoding.encode($0.0))=\(PercentDecoding.encode($0.1))" }.joined(
            separator: "&")
        return try await exchange(.post, path, fields, Data(body.utf8))
    }

    private func exchange(
        _ method: HTTPRequest.Method, _ path: String, _ fields: HTTPFields, _ body: Data?
    ) async throws -> TestHTTPClient.Answer {
        if let responder {
            return try await http.send(method, base + path, headers: fields, body: body, through: responder)
        }
        return try await http.send(method, base + path, headers: fields, body: body)
    }
}
