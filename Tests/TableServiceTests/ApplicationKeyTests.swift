import Foundation
import SyncProtocol
import TableService
import Testing

/// `--app-key`: requests must carry the key in X-ZUMO-APPLICATION.
@Suite struct ApplicationKeyTests {
    @Test(arguments: Backend.all) func requestsWithoutTheRightKeyAreRefused(_ backend: Backend) async throws {
        try await withTestServer(backend, applicationKey: "s3cret", tables: ["todoitem"]) { server in
            let missing = try await server.send(.get, "/tables/todoitem")
            #expect(missing.status == 401)
            #expect((missing.object?["error"] as? String)?.contains("X-ZUMO-APPLICATION") == true)
            for wrong in ["s3cre", "s3cret!", "S3CRET", ""] {
                let reply = try await server.send(
                    .post, "/tables/todoitem", json: ["text": "x"],
                    headers: [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.applicationKey: wrong])
                #expect(reply.status == 401)
            }
            let right = try await server.send(
                .get, "/tables/todoitem",
                headers: [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.applicationKey: "s3cret"])
            #expect(right.status == 200)
            #expect(right.text == "[]")
        }
    }

    @Test(arguments: Backend.all) func preflightNeedsNoKey(_ backend: Backend) async throws {
        let allowed = try #require(WebOrigin("http://localhost:3000"))
        try await withTestServer(
            backend, applicationKey: "s3cret", configure: { $0.allowedOrigins = [allowed] }
        ) { server in
            let reply = try await server.send(
                .options, "/tables/todoitem",
                headers: [.origin: "http://localhost:3000", .accessControlRequestMethod: "PATCH"])
            #expect(reply.status == 200)
            #expect(reply.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            let foreign = try await server.send(
                .options, "/tables/todoitem",
                headers: [.origin: "http://evil.example", .accessControlRequestMethod: "PATCH"])
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            let nextPort = try await server.send(
                .options, "/tables/todoitem",
                headers: [.origin: "http://localhost:3001", .accessControlRequestMethod: "PATCH"])
            #expect(nextPort.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
