import Foundation
import HTTPServer
import HTTPTypes

/// An ``HTTPServer`` with the routes a test gives it, on 127.0.0.1 and an ephemeral port, and a
/// client to talk to it.
///
/// ```swift
/// let server = try TestHTTPServer { router in router.get("/ok") { _ in .text("ok") } }
/// let answer = try await server.send(.get, "/ok")
/// await server.server.stop()
/// ```
public struct TestHTTPServer: Sendable {
    /// The running server.
    public let server: HTTPServer
    private let http = TestHTTPClient()

    /// Starts a server whose router `configure` sets up, accepting bodies up to `maxBodySize` bytes.
    public init(
        _ configure: (inout Router) -> Void, maxBodySize: Int = 1 << 20, heartbeatInterval: Duration = .seconds(15)
    ) throws {
        var router = Router()
        configure(&router)
        server = try HTTPServer(
            configuration: .init(
                host: "127.0.0.1", port: 0, maxBodySize: maxBodySize, heartbeatInterval: heartbeatInterval),
            responder: router.buildResponder())
    }

    /// The address of `path` on the server.
    public func url(_ path: String) -> URL { URL(string: server.url + path)! }

    /// Opens the event stream at `path`.
    public func events(_ path: String, headers: HTTPFields = [:]) async throws -> TestEventStream {
        try await http.events(server.url + path, headers: headers)
    }

    /// Sends a request; returns status, headers (lower-case names) and body.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, body: Data? = nil, headers: HTTPFields = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        let answer = try await http.send(method, server.url + path, headers: headers, body: body)
        return (answer.status, answer.headers, answer.body)
    }
}
