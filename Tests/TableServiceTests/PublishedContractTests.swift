import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import TestSupport
import Testing

/// `/openapi.json` and the service agree: the methods `OPTIONS` allows are the document's, a
/// malformed `__includedeleted` and a missing body are refused as the document says, and the
/// document follows the schema file's changes.
@Suite("Published contract")
struct PublishedContractTests {
    static let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]

    /// The methods the document gives `path` (HEAD goes with GET), upper-cased and sorted.
    static func documentedMethods(_ server: TestServer, _ path: String) async throws -> [String] {
        let document = try await server.send(.get, "/openapi.json", headers: v3).object
        let paths = try #require(document?["paths"] as? [String: Any])
        let operations = try #require(paths[path] as? [String: Any])
        var methods = operations.keys.filter { $0 != "parameters" }.map { $0.uppercased() }
        if methods.contains("GET") { methods.append("HEAD") }
        return methods.sorted()
    }

    @Test("OPTIONS allows on a table and on an item the methods the v3 document gives them")
    func optionsAllowsTheDocumentedMethods() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            for (target, path) in [
                ("/tables/todoitem", "/tables/todoitem"), ("/tables/todoitem/a", "/tables/todoitem/{id}"),
            ] {
                let reply = try await server.send(.options, target, headers: Self.v3)
                #expect(reply.status == 200)
                let allowed = (reply.header("Allow") ?? "").split(separator: ",").map(String.init).sorted()
                #expect(allowed == (try await Self.documentedMethods(server, path)), "\(target): \(allowed)")
            }
            let v2 = try await server.send(
                .options, "/tables/todoitem/a", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(v2.header("Allow") == "GET,HEAD,PATCH,DELETE,POST", "v2 items keep PATCH and undelete")
        }
    }

    @Test("__includedeleted other than true or false is a 400 in v3, as the document's boolean says")
    func includeDeletedMustBeABoolean() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            for value in ["null", "1", "yes"] {
                let reply = try await server.send(.get, "/tables/todoitem?__includedeleted=\(value)", headers: Self.v3)
                #expect(reply.status == 400, "\(value)")
                #expect((reply.object?["error"] as? String)?.contains("__includeDeleted") == true, "\(reply.text)")
            }
            for value in ["true", "FALSE"] {
                #expect(
                    try await server.send(.get, "/tables/todoitem?__includedeleted=\(value)", headers: Self.v3).status
                        == 200)
            }
        }
    }

    @Test("A POST or PUT without a body is a 400, and the document says a body is required")
    func writesWithoutABodyAreRefusedAsDocumented() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "x"], headers: Self.v3)
            let post = try await server.send(.post, "/tables/todoitem", headers: Self.v3)
            #expect(post.status == 400 && post.object?["error"] != nil, "\(post.text)")
            let put = try await server.send(.put, "/tables/todoitem/a", headers: Self.v3)
            #expect(put.status == 400 && put.object?["error"] != nil, "\(put.text)")
            let document = try await server.send(.get, "/openapi.json", headers: Self.v3).object
            let paths = try #require(document?["paths"] as? [String: [String: Any]])
            let postBody = (paths["/tables/todoitem"]?["post"] as? [String: Any])?["requestBody"] as? [String: Any]
            let putBody = (paths["/tables/todoitem/{id}"]?["put"] as? [String: Any])?["requestBody"] as? [String: Any]
            #expect(postBody?["required"] as? Bool == true)
            #expect(putBody?["required"] as? Bool == true)
        }
    }

    @Test("/openapi.json follows the schema file's changes: new name, default, former name write-only")
    func documentFollowsSchemaChanges() async throws {
        let schema = try ServiceSchema(json: Data(SchemaChangeTests.schema2.utf8))
        try await withTestServer(configure: { $0.schema = schema }) { server in
            _ = try await server.send(.post, "/tables/todo", json: ["id": "a", "title": "x"], headers: Self.v3)
            let document = try await server.send(.get, "/openapi.json", headers: Self.v3).object
            let components = (document?["components"] as? [String: Any])?["schemas"] as? [String: Any]
            let properties = try #require(
                (components?["todo"] as? [String: Any])?["properties"] as? [String: [String: Any]])
            #expect(properties["title"] != nil)
            #expect(properties["priority"]?["default"] as? Int == 3)
            #expect(
                properties["text"]?["writeOnly"] as? Bool == true && properties["text"]?["deprecated"] as? Bool == true)
        }
    }

    @Test("$skip past the document's maximum is a 400")
    func skipPastTheMaximumIsRefused() async throws {
        try await withTestServer(tables: ["todoitem"]) { server throws in
            #expect(try await server.send(.get, "/tables/todoitem?$skip=2147483647", headers: Self.v3).status == 200)
            #expect(try await server.send(.get, "/tables/todoitem?$skip=2147483648", headers: Self.v3).status == 400)
        }
    }

    @Test("A malformed timeout on the change channel is a 400 even without a cursor")
    func malformedTimeoutIsRefusedWithoutACursor() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            let reply = try await server.send(.get, "/tables/todoitem/$changes?timeout=null", headers: Self.v3)
            #expect(reply.status == 400, "\(reply.text)")
            #expect(try await server.send(.get, "/tables/todoitem/$changes?timeout=5", headers: Self.v3).status == 200)
        }
    }

    @Test("A value of the wrong type under a former or retired name is a 400, even when the new name is sent too")
    func wrongTypeUnderAFormerNameIsRefused() async throws {
        let json = """
            {"todo": {"columns": {"title": {"type": "string", "renamedFrom": "text"},
                "notes": {"type": "string", "retired": true}}}}
            """
        try await withTestServer(configure: { $0.schema = try! ServiceSchema(json: Data(json.utf8)) }) { server in
            for body: [String: Any] in [["id": "a", "title": "x", "text": false], ["id": "b", "notes": 5]] {
                let reply = try await server.send(.post, "/tables/todo", json: body, headers: Self.v3)
                #expect(reply.status == 400, "\(body): \(reply.text)")
            }
            let fine = try await server.send(
                .post, "/tables/todo", json: ["id": "c", "text": "old", "notes": "n"], headers: Self.v3)
            #expect(fine.status == 201 && fine.object?["title"] as? String == "old", "\(fine.text)")
        }
    }

    @Test("The hidden columns of schema changes cannot be written")
    func hiddenSchemaColumnsCannotBeWritten() async throws {
        try await withTestServer(configure: {
            $0.schema = try! ServiceSchema(json: Data(SchemaChangeTests.schema2.utf8))
        }) { server in
            for name in ["__backfilled", "__retired_text"] {
                let reply = try await server.send(
                    .post, "/tables/todo", json: ["id": "a", name: "1 x"], headers: Self.v3)
                #expect(reply.status == 400 && reply.text.contains("kept by the service"), "\(name): \(reply.text)")
            }
        }
    }
}
