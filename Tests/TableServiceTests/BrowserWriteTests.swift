import Foundation
import TableService
import TestSupport
import Testing

/// A web page on another site cannot write into the service: its simple requests (forms,
/// `text/plain`) are refused before anything is stored, and the schema does not grow.
@Suite struct BrowserWriteTests {
    /// A request as a browser sends it for a page on `origin`.
    static func raw(
        _ method: String, _ target: String, port: Int, origin: String?, contentType: String?, body: String
    ) async throws -> String {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nZUMO-API-VERSION: 2.0.0\r\n"
        if let origin { head += "Origin: \(origin)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return try await RawHTTP.send(port: port, head + body)
    }

    static let simpleBodies: [(type: String, body: String)] = [
        ("text/plain", #"{"text":"forged","injected":"column"}"#),
        ("application/x-www-form-urlencoded", "text=forged&injected=column"),
        (
            "multipart/form-data; boundary=XyZ",
            "--XyZ\r\nContent-Disposition: form-data; name=\"injected\"\r\n\r\ncolumn\r\n--XyZ--\r\n"
        ),
    ]

    @Test(arguments: Backend.all) func crossOriginSimpleWritesAreRefusedAndStoreNothing(_ backend: Backend) async throws
    {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            for (type, body) in Self.simpleBodies {
                let refused = try await Self.raw(
                    "POST", "/tables/todoitem", port: server.running.port, origin: "http://evil.example",
                    contentType: type, body: body)
                #expect(refused.hasPrefix("HTTP/1.1 403"), "\(type): \(refused)")
                #expect(refused.contains(#""error":"Writes from web pages on http://evil.example are refused"#))
                // Without Origin (a page that hid it, or a script): refused for its type.
                let untyped = try await Self.raw(
                    "POST", "/tables/todoitem", port: server.running.port, origin: nil, contentType: type, body: body)
                #expect(untyped.hasPrefix("HTTP/1.1 415"), "\(type): \(untyped)")
            }
            let noType = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: nil, contentType: nil,
                body: #"{"text":"x"}"#)
            #expect(noType.hasPrefix("HTTP/1.1 415"))
            // JSON from a foreign page is refused too: the origin decides, not the type.
            let json = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: "http://evil.example",
                contentType: "application/json", body: #"{"text":"forged","injected":"column"}"#)
            #expect(json.hasPrefix("HTTP/1.1 403"))
            let opaque = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: "null", contentType: "application/json",
                body: #"{"text":"forged"}"#)
            #expect(opaque.hasPrefix("HTTP/1.1 403"))

            let list = try await server.send(.get, "/tables/todoitem")
            #expect(list.array?.isEmpty == true)
            let column = try await server.send(.get, "/tables/todoitem?$select=injected")
            #expect(column.status == 400, "the schema grew: \(column.text)")
        }
    }

    @Test(arguments: Backend.all) func crossOriginUpdatesAndDeletesAreRefused(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "mine"]).status == 201)
            for method in ["PATCH", "DELETE", "PUT", "POST"] {
                let target = "/tables/todoitem/a"
                let reply = try await Self.raw(
                    method, target, port: server.running.port, origin: "http://evil.example", contentType: "text/plain",
                    body: method == "DELETE" ? "" : #"{"text":"forged"}"#)
                #expect(reply.hasPrefix("HTTP/1.1 403"), "\(method): \(reply)")
            }
            let item = try await server.send(.get, "/tables/todoitem/a")
            #expect(item.object?["text"] as? String == "mine")
            #expect(item.object?["deleted"] as? Bool == false)
        }
    }

    @Test(arguments: Backend.all) func aPageOnAnotherLoopbackPortIsRefusedAndWritesNothing(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let port = server.running.port
            let other = port == 65535 ? port - 1 : port + 1
            for origin in [
                "http://127.0.0.1:\(other)", "http://localhost:\(other)", "http://127.0.0.1",
                "https://127.0.0.1:\(port)",
            ] {
                let reply = try await Self.raw(
                    "POST", "/tables/todoitem", port: port, origin: origin, contentType: "application/json",
                    body: #"{"text":"from another local app","injected":"column"}"#)
                #expect(reply.hasPrefix("HTTP/1.1 403"), "\(origin): \(reply)")
                #expect(!reply.contains("Access-Control-Allow-Origin"), "\(origin): \(reply)")
            }
            let list = try await server.send(.get, "/tables/todoitem")
            #expect(list.array?.isEmpty == true)
            let column = try await server.send(.get, "/tables/todoitem?$select=injected")
            #expect(column.status == 400, "the schema grew: \(column.text)")
        }
    }

    @Test(arguments: Backend.all) func aPageOfTheServiceItselfWrites(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            let port = server.running.port
            let created = try await Self.raw(
                "POST", "/tables/todoitem", port: port, origin: "http://127.0.0.1:\(port)",
                contentType: "application/json", body: #"{"id":"own","text":"from the service's own page"}"#)
            #expect(created.hasPrefix("HTTP/1.1 201"), "\(created)")
            let deleted = try await Self.raw(
                "DELETE", "/tables/todoitem/own", port: port, origin: "HTTP://127.0.0.1:\(port)", contentType: nil,
                body: "")
            #expect(deleted.hasPrefix("HTTP/1.1 200"), "\(deleted)")
        }
    }

    @Test(arguments: Backend.all) func anExplicitlyAllowedOriginWritesWithJSON(_ backend: Backend) async throws {
        let allowed = try #require(WebOrigin("http://localhost:3000"))
        try await withTestServer(backend, configure: { $0.allowedOrigins = [allowed] }) { server in
            let reply = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: "http://localhost:3000",
                contentType: "application/json; charset=utf-8", body: #"{"id":"ok","text":"from an allowed page"}"#)
            #expect(reply.hasPrefix("HTTP/1.1 201"), "\(reply)")
            #expect(reply.contains("Access-Control-Allow-Origin: http://localhost:3000"))
            let otherPort = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: "http://localhost:3001",
                contentType: "application/json", body: #"{"id":"no","text":"from the next port"}"#)
            #expect(otherPort.hasPrefix("HTTP/1.1 403"), "\(otherPort)")
            let item = try await server.send(.get, "/tables/todoitem/no")
            #expect(item.status == 404)
        }
    }

    @Test(arguments: Backend.all) func programsWriteWithoutOriginAndBodilessWritesNeedNoType(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            let created = try await Self.raw(
                "POST", "/tables/todoitem", port: server.running.port, origin: nil, contentType: "application/json",
                body: #"{"id":"p","text":"curl"}"#)
            #expect(created.hasPrefix("HTTP/1.1 201"))
            let deleted = try await Self.raw(
                "DELETE", "/tables/todoitem/p", port: server.running.port, origin: nil, contentType: nil, body: "")
            #expect(deleted.hasPrefix("HTTP/1.1 200"))
            let undeleted = try await Self.raw(
                "POST", "/tables/todoitem/p", port: server.running.port, origin: nil, contentType: nil, body: "")
            #expect(undeleted.hasPrefix("HTTP/1.1 201"), "\(undeleted)")
        }
    }

    @Test(arguments: Backend.all) func foreignHostIsAnswered421(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let port = server.running.port
            let foreign = try await RawHTTP.send(
                port: port, "GET /tables/todoitem HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
            #expect(foreign.hasPrefix("HTTP/1.1 421"), "\(foreign)")
            #expect(foreign.contains("http://127.0.0.1:\(port)/"), "the refusal names this server's own address")
            #expect(foreign.contains("--allowed-host evil.example"))
            let local = try await RawHTTP.send(
                port: port,
                "GET /tables/todoitem HTTP/1.1\r\nHost: localhost:\(port)\r\nZUMO-API-VERSION: 2.0.0\r\n"
                    + "Connection: close\r\n\r\n")
            #expect(local.hasPrefix("HTTP/1.1 200"), "\(local)")
        }
    }

    @Test(arguments: Backend.all) func allowedHostNamesAreAnswered(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"], allowedHosts: ["todo.example.org"]) { server in
            let port = server.running.port
            let named = try await RawHTTP.send(
                port: port,
                "GET /tables/todoitem HTTP/1.1\r\nHost: TODO.example.org\r\nZUMO-API-VERSION: 2.0.0\r\n"
                    + "Connection: close\r\n\r\n")
            #expect(named.hasPrefix("HTTP/1.1 200"), "\(named)")
            let other = try await RawHTTP.send(
                port: port, "GET /tables/todoitem HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n")
            #expect(other.hasPrefix("HTTP/1.1 421"))
        }
    }
}
