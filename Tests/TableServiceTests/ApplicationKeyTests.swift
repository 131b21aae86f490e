import Foundation
import TableService
import Testing

/// `--app-key`: requests must carry the key in X-ZUMO-APPLICATION.
@Suite struct ApplicationKeyTests {
    @Test(arguments: Backend.all) func requestsWithoutTheRightKeyAreRefused(_ backend: Backend) async throws {
        let server = try await TestServer(backend, applicationKey: "s3cret", tables: ["todoitem"])
        defer { server.stop() }
        let missing = try await server.send("GET", "/tables/todoitem")
        #expect(missing.status == 401)
        #expect((missing.object?["error"] as? String)?.contains("X-ZUMO-APPLICATION") == true)
        for wrong in ["s3cre", "s3cret!", "S3CRET", ""] {
            let reply = try await server.send(
                "POST", "/tables/todoitem", json: ["text": "x"],
                headers: ["ZUMO-API-VERSION": "2.0.0", "X-ZUMO-APPLICATION": wrong])
            #expect(reply.status == 401)
        }
        let right = try await server.send(
            "GET", "/tables/todoitem", headers: ["ZUMO-API-VERSION": "2.0.0", "X-ZUMO-APPLICATION": "s3cret"])
        #expect(right.status == 200)
        #expect(right.text == "[]")
    }

    @Test(arguments: Backend.all) func preflightNeedsNoKey(_ backend: Backend) async throws {
        let allowed = try #require(WebOrigin("http://localhost:3000"))
        let server = try await TestServer(backend, applicationKey: "s3cret") { $0.allowedOrigins = [allowed] }
        defer { server.stop() }
        let reply = try await server.send(
            "OPTIONS", "/tables/todoitem",
            headers: ["Origin": "http://localhost:3000", "Access-Control-Request-Method": "PATCH"])
        #expect(reply.status == 200)
        #expect(reply.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        let foreign = try await server.send(
            "OPTIONS", "/tables/todoitem",
            headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "PATCH"])
        #expect(foreign.header("Access-Control-Allow-Origin") == nil)
        let nextPort = try await server.send(
            "OPTIONS", "/tables/todoitem",
            headers: ["Origin": "http://localhost:3001", "Access-Control-Request-Method": "PATCH"])
        #expect(nextPort.header("Access-Control-Allow-Origin") == nil)
    }
}
