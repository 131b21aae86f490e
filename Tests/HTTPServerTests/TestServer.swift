import Foundation
import HTTPTypes

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real server on 127.0.0.1 with an ephemeral port, and a client to talk to it.
struct TestServer {
    let server: HTTPServer

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
        _ method: HTTPRequest.Method, _ path: String, body: Data? = nil, headers: HTTPFields = [:],
        session: URLSession = .shared
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: url(path))
        request.httpMethod = method.rawValue
        request.httpBody = body
        for field in headers { request.setValue(field.value, forHTTPHeaderField: field.name.rawName) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = "\(value)" }
        return (http.statusCode, fields, data)
    }
}
