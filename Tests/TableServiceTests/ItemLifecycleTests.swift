import Foundation
import SyncProtocol
import Testing

/// Inserts, reads, merges, soft deletes and undeletes, with the stricter answers of our service.
@Suite struct ItemLifecycleTests {
    @Test(arguments: Backend.all) func duplicateInsertAnswers409WithTheServerItemAndETag(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            let first = try await server.send(.post, "/tables/todoitem", json: ["id": "dup", "text": "server"])
            let duplicate = try await server.send(.post, "/tables/todoitem", json: ["id": "dup", "text": "client"])
            #expect(duplicate.status == 409)
            #expect(duplicate.object?["text"] as? String == "server")
            #expect(duplicate.object?["version"] as? String == first.object?["version"] as? String)
            #expect(duplicate.header("ETag") == first.header("ETag"))
            _ = try await server.send(.delete, "/tables/todoitem/dup")
            let again = try await server.send(.post, "/tables/todoitem", json: ["id": "dup", "text": "client"])
            #expect(again.status == 409)
            #expect(again.object?["deleted"] as? Bool == true)
        }
    }

    @Test(arguments: Backend.all) func stalePatchAnswers412WithServerItem(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["id": "x", "text": "one"])
            let oldTag = try #require(created.header("ETag"))
            let changed = try await server.send(
                .patch, "/tables/todoitem/x", json: ["text": "two"],
                headers: [ProtocolHeader.apiVersion: "2.0.0", .ifMatch: oldTag])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != oldTag)
            let stale = try await server.send(
                .patch, "/tables/todoitem/x", json: ["text": "three"],
                headers: [ProtocolHeader.apiVersion: "2.0.0", .ifMatch: oldTag])
            #expect(stale.status == 412)
            #expect(stale.object?["text"] as? String == "two")
            #expect(stale.header("ETag") == changed.header("ETag"))
            let weak = try await server.send(
                .patch, "/tables/todoitem/x", json: ["text": "four"],
                headers: [ProtocolHeader.apiVersion: "2.0.0", .ifMatch: "W/\"x\""])
            #expect(weak.status == 200)  // a weak tag is not a version
        }
    }

    @Test(arguments: Backend.all) func staleVersionInTheBodyAnswers409WithServerItem(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "x", "text": "one"])
            let reply = try await server.send(.patch, "/tables/todoitem/x", json: ["text": "two", "version": "old"])
            #expect(reply.status == 409)
            #expect(reply.object?["text"] as? String == "one")
            #expect(reply.header("ETag") != nil)
        }
    }

    @Test(arguments: Backend.all) func softDeleteHidesTheItemAndUndeleteBringsItBack(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["text": "server id"])
            let id = try #require(created.object?["id"] as? String)
            #expect(UUID(uuidString: id) != nil)
            let deleted = try await server.send(.delete, "/tables/todoitem/\(id)")
            #expect(deleted.status == 200)
            #expect(deleted.object?["deleted"] as? Bool == true)
            #expect(deleted.object?["version"] as? String != created.object?["version"] as? String)
            #expect(try await server.send(.get, "/tables/todoitem/\(id)").status == 404)
            #expect(try await server.send(.patch, "/tables/todoitem/\(id)", json: ["text": "x"]).status == 404)
            #expect(try await server.send(.get, "/tables/todoitem").array?.count == 0)
            #expect(try await server.send(.get, "/tables/todoitem?__includeDeleted=true").array?.count == 1)
            let restored = try await server.send(.post, "/tables/todoitem/\(id)")
            #expect(restored.status == 201)
            #expect(restored.object?["deleted"] as? Bool == false)
            #expect(try await server.send(.get, "/tables/todoitem/\(id)").status == 200)
        }
    }

    @Test(arguments: Backend.all) func reservedPropertiesAreRefusedWithTheOfficialMessage(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            for name in ["createdAt", "updatedAt", "deleted"] {
                let reply = try await server.send(
                    .post, "/tables/todoitem", json: ["text": "x", name: "2000-01-01T00:00:00.000Z"])
                #expect(reply.status == 400)
                #expect(
                    reply.object?["error"] as? String == "Cannot update item with property '\(name)' as it is reserved")
            }
        }
    }

    @Test(arguments: Backend.all) func columnsAreCreatedOnFirstWriteWithTheirJSONTypes(_ backend: Backend) async throws
    {
        try await withTestServer(backend) { server in
            _ = try await server.send(
                .post, "/tables/Notes_2", json: ["id": "n1", "title": "a", "stars": 3, "pinned": true])
            _ = try await server.send(.post, "/tables/Notes_2", json: ["id": "n2", "ratio": 0.25, "later": NSNull()])
            let rows = try #require(try await server.send(.get, "/tables/notes_2?$orderby=id").array)
            #expect(rows.count == 2)
            #expect(rows[0]["stars"] as? Int == 3)
            #expect(rows[0]["pinned"] as? Bool == true)
            #expect(rows[1]["ratio"] as? Double == 0.25)
            #expect(rows[1]["title"] is NSNull)
            let wrongType = try await server.send(.patch, "/tables/Notes_2/n1", json: ["stars": "many"])
            #expect(wrongType.status == 400)
            let nested = try await server.send(.post, "/tables/Notes_2", json: ["tags": ["a"]])
            #expect(nested.status == 400)
            let badName = try await server.send(.post, "/tables/Notes_2", json: ["bad-name": 1])
            #expect(badName.status == 400)
            #expect(try await server.send(.get, "/tables/9lives").status == 400)
            #expect(try await server.send(.get, "/tables/sqlite_master").status == 400)
        }
    }

    @Test(arguments: Backend.all) func unknownTableIs404AndConfiguredTablesStartEmpty(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let unknown = try await server.send(.get, "/tables/nosuchtable")
            #expect(unknown.status == 404)
            #expect(unknown.object?["error"] != nil)
            #expect(try await server.send(.get, "/tables/todoitem").text == "[]")
        }
    }
}

extension ItemLifecycleTests {
    @Test(arguments: Backend.all) func putIsAJSON405NamingTheMethodsToUse(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            let reply = try await server.send(.put, "/tables/todoitem/x", json: ["text": "x"])
            #expect(reply.status == 405)
            #expect((reply.object?["error"] as? String)?.contains("PATCH") == true)
            #expect(reply.header("Allow")?.contains("PATCH") == true)
        }
    }
}
