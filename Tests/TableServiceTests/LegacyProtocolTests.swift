import Foundation
import HTTPTypes
import SyncProtocol
import Testing

/// Requests without `ZUMO-API-VERSION` are answered in the 2015 Mobile Services style.
@Suite struct LegacyProtocolTests {
    @Test(arguments: Backend.all) func tutorialsLiteralPatchWorks(_ backend: Backend) async throws {
        try await withTestServer(backend, applicationKey: "tutorial-key") { server in
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "D1C6D5D6-7DB7-4AB0-9E6F-1DA29E2A3D5A", "text": "learn Azure"],
                headers: [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.applicationKey: "tutorial-key"])
            #expect(created.status == 201)

            // The tutorial's request, verbatim apart from the host.
            let reply = try await server.send(
                .patch, "/tables/todoitem/D1C6D5D6-7DB7-4AB0-9E6F-1DA29E2A3D5A?__systemproperties=__version",
                headers: [ProtocolHeader.applicationKey: "tutorial-key", .contentType: "application/json"],
                body: Data(#"{"id": "D1C6D5D6-7DB7-4AB0-9E6F-1DA29E2A3D5A", "text": "I love Azure!"}"#.utf8))
            #expect(reply.status == 200)
            let body = try #require(reply.object)
            #expect(Set(body.keys) == ["id", "text", "__version"])
            #expect(body["text"] as? String == "I love Azure!")
            #expect(reply.header("ETag") == "\"\(body["__version"] as? String ?? "")\"")
        }
    }

    @Test(arguments: Backend.all) func systemPropertiesParameterChoosesTheLegacyColumns(_ backend: Backend) async throws
    {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "x", "text": "t"])
            let none = try await server.send(.get, "/tables/todoitem", headers: [:])
            #expect(none.array?.first.map { Set($0.keys) } == ["id", "text"])
            let all = try await server.send(.get, "/tables/todoitem?__systemproperties=*", headers: [:])
            #expect(
                all.array?.first.map { Set($0.keys) } == [
                    "id", "text", "__createdAt", "__updatedAt", "__version", "__deleted",
                ])
            let two = try await server.send(
                .get, "/tables/todoitem/x?__systemproperties=__createdAt,__updatedAt", headers: [:])
            #expect(two.object.map { Set($0.keys) } == ["id", "text", "__createdAt", "__updatedAt"])
            let filtered = try await server.send(
                .get,
                "/tables/todoitem?$filter=__updatedAt%20gt%20datetimeoffset'2000-01-01T00:00:00Z'&$orderby=__createdAt",
                headers: [:])
            #expect(filtered.array?.count == 1)
            let bad = try await server.send(.get, "/tables/todoitem?__systemproperties=__colour", headers: [:])
            #expect(bad.status == 400)
        }
    }

    @Test(arguments: Backend.all) func staleLegacyVersionInTheBodyAnswers412WithTheServerItem(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "x", "text": "t"])
            let reply = try await server.send(
                .patch, "/tables/todoitem/x", json: ["text": "u", "__version": "stale"], headers: [:])
            #expect(reply.status == 412)
            #expect(reply.object?["__version"] is String)
            #expect(reply.object?["text"] as? String == "t")
            let reserved = try await server.send(.patch, "/tables/todoitem/x", json: ["__updatedAt": "x"], headers: [:])
            #expect(reserved.status == 400)
            #expect(
                reserved.object?["error"] as? String
                    == "Cannot update item with property '__updatedAt' as it is reserved")
        }
    }

    /// The captured requests that had no ZUMO-API-VERSION (the official server answered 400).
    @Test(arguments: Backend.all) func capturedRequestsWithoutAPIVersionGetLegacyAnswers(
        _ backend: Backend
    ) async throws {
        let exchanges = try ReferenceExchange.loadAll().filter { !$0.hasAPIVersion && $0.method != "OPTIONS" }
        #expect(exchanges.count == 3)
        for exchange in exchanges {
            try await withTestServer(backend) { server in
                _ = try await server.send(
                    .post, "/tables/todoitem", json: ["id": "item-1", "text": "first", "complete": false])
                var headers = HTTPFields()
                for (name, value) in exchange.request.headers {
                    guard let name = HTTPField.Name(name), name.canonicalName != "host", name != .contentLength else {
                        continue
                    }
                    headers.append(HTTPField(name: name, value: value))
                }
                let reply = try await server.send(
                    try #require(HTTPRequest.Method(exchange.method)), exchange.target, headers: headers,
                    body: exchange.request.body.isEmpty ? nil : Data(exchange.request.body.utf8))
                #expect((200..<300).contains(reply.status), "\(exchange.name): \(reply.status) \(reply.text)")
                let items = reply.array ?? reply.object.map { [$0] } ?? []
                #expect(!items.isEmpty, "\(exchange.name)")
                let asked = exchange.target.contains("__systemproperties=*")
                for item in items {
                    #expect(
                        item["createdAt"] == nil && item["version"] == nil,
                        "\(exchange.name): v2 names in a legacy answer")
                    #expect((item["__version"] != nil) == asked, "\(exchange.name)")
                }
            }
        }
    }

    @Test(arguments: Backend.all) func otherAPIVersionsAreRefusedWithTheOfficialMessage(_ backend: Backend) async throws
    {
        try await withTestServer(backend) { server in
            for version in ["1.0.0", "3.1.0", "4.0.0", "banana"] {
                let reply = try await server.send(
                    .get, "/tables/todoitem", headers: [ProtocolHeader.apiVersion: version])
                #expect(reply.status == 400)
                #expect(
                    reply.object?["error"] as? String
                        == "An invalid API version was specified in the request, this request needs to specify a ZUMO-API-VERSION of 2.0.0."
                )
            }
            let query = try await server.send(.get, "/tables/todoitem?ZUMO-API-VERSION=2.0.1", headers: [:])
            #expect(query.status == 404)  // accepted as v2; the table does not exist yet
            for version in ["3.0.0", "3.0"] {
                let v3 = try await server.send(.get, "/tables/todoitem", headers: [ProtocolHeader.apiVersion: version])
                #expect(v3.status == 404, "Datasync v3 is spoken: \(v3.text)")
            }
        }
    }
}
