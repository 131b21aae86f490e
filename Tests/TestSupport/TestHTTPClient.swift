import AsyncHTTPClient
import Foundation
import HTTPServer
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// HTTP for tests, on async-http-client: one client every harness uses to talk to the servers it
/// starts. Unlike FoundationNetworking's `URLSession`, whose `data(for:)` waits with
/// `DispatchQueue.sync` on a cooperative thread, it never blocks one; on a 2-core machine a few such
/// waits were enough to hold up every other test's tasks.
///
/// It follows no redirect unless asked (tests look at the 303 itself), and keeps the cookies the
/// servers set when asked (a browser session: the dashboard's session and CSRF cookies).
public final class TestHTTPClient: Sendable {
    /// An answer as tests read it: header names in lower case (repeated fields joined by ", ").
    public struct Answer: Sendable {
        public let status: Int
        public let headers: [String: String]
        public let body: Data

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let client: HTTPClient
    private let keepsCookies: Bool
    private let cookies = Mutex<[String: String]>([:])

    /// - Parameters:
    ///   - followsRedirects: follow up to five redirects (off: the 3xx is the answer).
    ///   - keepsCookies: send back the cookies the servers set, as a browser would.
    ///   - caFile: a PEM file of CAs trusted besides the system's.
    public init(followsRedirects: Bool = false, keepsCookies: Bool = false, caFile: String? = nil) {
        // A pool of its own: a pool shared by every test would keep connections to a server that
        // stopped, and use them for the next server given the same port.
        var configuration = Self.configuration(
            redirects: followsRedirects ? .follow(max: 5, allowCycles: false) : .disallow)
        if let caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(caFile)]
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.keepsCookies = keepsCookies
    }

    /// Sends one request to `url` and reads the whole answer (up to 64 MiB). The deadline is a safety
    /// net far beyond what a quiet machine needs: CI's loaded machine once held a healthy exchange
    /// through the fault proxy for 30 s.
    public func send(
        _ method: HTTPRequest.Method, _ url: String, headers: HTTPFields = [:], body: Data? = nil,
        timeout: Duration = .seconds(90)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        // async-http-client takes NIO's spelling of methods and fields.
        request.method = HTTPMethod(rawValue: method.rawValue)
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        if keepsCookies, !headers.contains(.cookie) {
            let line = cookies.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
            if !line.isEmpty { request.headers.replaceOrAdd(name: "Cookie", value: line.joined(separator: "; ")) }
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(
            request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        if keepsCookies { keep(response.headers["set-cookie"]) }
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            let key = name.lowercased()
            fields[key] = fields[key].map { $0 + ", " + value } ?? value
        }
        return Answer(status: Int(response.status.code), headers: fields, body: Data(buffer: bytes))
    }

    /// Answers a request to `url` in process, through `responder` (the router of the server at
    /// `url`), as ``send(_:_:headers:body:timeout:)`` would over the socket: from loopback, with the
    /// `Host` a client sends, this client's cookies kept alike. An event stream's answer is fetched
    /// over the socket (only the server runs one).
    public func send(
        _ method: HTTPRequest.Method, _ url: String, headers: HTTPFields = [:], body: Data? = nil,
        through responder: Responder
    ) async throws -> Answer {
        guard let address = URLComponents(string: url), let host = address.host else { throw URLError(.badURL) }
        var fields = headers
        if !fields.contains(Request.hostField) {
            fields[Request.hostField] = address.port.map { "\(host):\($0)" } ?? host
        }
        if keepsCookies, !headers.contains(.cookie) {
            let line = cookies.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
            if !line.isEmpty { fields[.cookie] = line.joined(separator: "; ") }
        }
        let target = address.percentEncodedPath + (address.percentEncodedQuery.map { "?" + $0 } ?? "")
        var request = try Request(method: method, target: target, headers: fields, body: body ?? Data())
        request.clientAddress = "127.0.0.1"
        let response = await responder.respond(to: request)
        if response.eventSource != nil { return try await send(method, url, headers: headers, body: body) }
        if keepsCookies { keep(response.headers[values: .setCookie]) }
        // Named as the socket's answers name them: in lower case, repeated fields joined.
        var answerHeaders: [String: String] = ["content-length": String(response.body.count)]
        for field in response.headers {
            let name = field.name.canonicalName
            answerHeaders[name] = answerHeaders[name].map { $0 + ", " + field.value } ?? field.value
        }
        return Answer(
            status: Int(response.status.code), headers: answerHeaders, body: method == .head ? Data() : response.body)
    }

    /// Sends a request and returns as soon as the answer's header is in; its body is read as it comes.
    func execute(_ request: HTTPClientRequest, deadline: Duration) async throws -> HTTPClientResponse {
        try await client.execute(request, timeout: .nanoseconds(Int64(deadline.components.seconds) * 1_000_000_000))
    }

    /// Stores each `Set-Cookie`'s name and value; an empty value or `Max-Age=0` removes the cookie.
    private func keep(_ lines: [String]) {
        for line in lines {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" }
            cookies.withLock { $0[name] = value.isEmpty || expired ? nil : value }
        }
    }

    deinit {
        // Without waiting: a deinit may run on a cooperative thread.
        client.shutdown { _ in }
    }

    private static func configuration(
        redirects: HTTPClient.Configuration.RedirectConfiguration
    ) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = redirects
        // Tests send many requests at once (up to 200 in one test).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        // Closed well before the servers close an idle connection (30 s), so that a request never
        // goes out on a connection the server is closing.
        configuration.connectionPool.idleTimeout = .seconds(4)
        // A request's deadline covers its answer's head only: a body (or an event stream) that stops
        // coming fails after this long without a byte, instead of holding its test for ever.
        configuration.timeout.read = .seconds(90)
        return configuration
    }
}
