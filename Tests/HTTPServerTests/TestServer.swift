import Foundation
import HTTPTypes
import TestSupport

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real server on 127.0.0.1 with an ephemeral port, and a client to talk to it.
struct TestServer {
    let server: HTTPServer
    private let http = TestHTTPClient()

    init(_ configure: (inout Router) -> Void, maxBodySize: Int = 1 << 20) throws {
        var router = Router()
        configure(&router)
        server = try HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, maxBodySize: maxBodySize),
            responder: router.buildResponder())
    }

    func url(_ path: String) -> URL { URL(string: server.url + path)! }

    /// Sends a request; returns status, headers and body.
    func send(
        _ method: HTTPRequest.Method, _ path: String, body: Data? = nil, headers: HTTPFields = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        let answer = try await http.send(method, server.url + path, headers: headers, body: body)
        return (answer.status, answer.headers, answer.body)
    }
}
