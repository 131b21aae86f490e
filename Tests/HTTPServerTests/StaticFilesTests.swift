import Foundation
import TestSupport
import Testing

@testable import HTTPServer

@Suite struct StaticFilesTests {
    /// A temp folder with `public/style.css`, a hidden file, a secret beside it and symlinks.
    static func makeFolder() throws -> URL {
        let base = try TemporaryFolder().url
        let root = base.appendingPathComponent("public")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("css"), withIntermediateDirectories: true)
        try Data("body { color: red }".utf8).write(to: root.appendingPathComponent("css/style.css"))
        try Data("hidden".utf8).write(to: root.appendingPathComponent(".env"))
        try Data("secret".utf8).write(to: base.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("escape.txt"), withDestinationURL: base.appendingPathComponent("secret.txt")
        )
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("up"), withDestinationURL: base)
        return root
    }

    static func server(_ root: URL) throws -> TestHTTPServer {
        let files = StaticFiles(folder: root)
        return try TestHTTPServer { router in router.get("/public/*") { try files.respond($0) } }
    }

    @Test func fileIsServedWithTypeETagAndThen304() async throws {
        let server = try Self.server(try Self.makeFolder())
        let first = try await server.send(.get, "/public/css/style.css")
        #expect(first.status == 200)
        #expect(first.headers["content-type"] == "text/css; charset=utf-8")
        #expect(first.headers["cache-control"]?.contains("max-age") == true)
        #expect(String(decoding: first.body, as: UTF8.self) == "body { color: red }")
        let etag = try #require(first.headers["etag"])
        let raw = try await RawHTTP.send(
            port: server.server.port,
            "GET /public/css/style.css HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\nConnection: close\r\n\r\n")
        #expect(raw.hasPrefix("HTTP/1.1 304"))
        #expect(raw.contains("ETag: \(etag)"))
    }

    @Test func changedFileGetsANewETag() async throws {
        let root = try Self.makeFolder()
        let server = try Self.server(root)
        let first = try await server.send(.get, "/public/css/style.css")
        try Data("body { color: blue; }".utf8).write(to: root.appendingPathComponent("css/style.css"))
        let second = try await server.send(.get, "/public/css/style.css")
        #expect(first.headers["etag"] != second.headers["etag"])
        #expect(String(decoding: second.body, as: UTF8.self) == "body { color: blue; }")
    }

    @Test func traversalAttemptsAreAll404() async throws {
        let server = try Self.server(try Self.makeFolder())
        let attempts = [
            "/public/../secret.txt", "/public/%2e%2e/secret.txt", "/public/%2E%2E%2Fsecret.txt",
            "/public/css/..%2F..%2Fsecret.txt", "/public/..%5Csecret.txt", "/public/escape.txt",
            "/public/up/secret.txt", "/public/.env", "/public/css/style.css%00.png", "/public/%252e%252e/secret.txt",
        ]
        for path in attempts {
            // Raw, so that no client normalises the dots away before sending.
            let raw = try await RawHTTP.send(
                port: server.server.port, "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(raw.hasPrefix("HTTP/1.1 404"), "\(path) was not refused")
            #expect(!raw.contains("secret\r") && !raw.hasSuffix("secret"), "\(path) leaked the file")
        }
    }
}
