import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import Testing

/// The item routes of Datasync v3 (`ZUMO-API-VERSION: 3.0.0`) on the tables v2 uses: status codes,
/// conditional headers, soft delete, and rows shared between the two protocols.
@Suite("Datasync v3 items")
struct DatasyncItemTests {
    static let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]

    static func headers(_ fields: [HTTPField.Name: String]) -> HTTPFields {
        var headers = v3
        for (name, value) in fields { headers[name] = value }
        return headers
    }

    @Test(
        "An insert is 201 with Location, ETag and Last-Modified; its id again is 409 with the stored item",
        arguments: Backend.all)
    func insertIsCreatedAndADuplicateIsAConflictCarryingTheItem(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "milk", "updatedAt": "2001-01-01T00:00:00.000Z"],
                headers: Self.v3)
            #expect(created.status == 201)
            #expect(created.header("Location") == server.url + "/tables/todoitem/a")
            let item = try #require(created.object)
            let version = try #require(item["version"] as? String)
            #expect(created.header("ETag") == "\"\(version)\"")
            #expect(created.header("Last-Modified")?.hasSuffix(" GMT") == true)
            #expect(item["createdAt"] == nil)
            #expect(item["updatedAt"] as? String != "2001-01-01T00:00:00.000Z", "the service sets updatedAt")
            let updatedAt = try #require(item["updatedAt"] as? String)
            #expect(updatedAt.range(of: #"\.\d{3}Z$"#, options: .regularExpression) != nil)

            let duplicate = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "x"], headers: Self.v3)
            #expect(duplicate.status == 409)
            #expect(duplicate.object?["text"] as? String == "milk")
            #expect(duplicate.header("ETag") == "\"\(version)\"")
            #expect(duplicate.header("Last-Modified") != nil)
        }
    }

    @Test(
        "If-Match: the current version writes; a stale or weak tag is 412 with the current item; * matches",
        arguments: Backend.all)
    func ifMatchGuardsReplaceAndDelete(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "v1"], headers: Self.v3)
            let version = try #require(created.object?["version"] as? String)
            for stale in ["\"stale\"", "W/\"\(version)\""] {
                let refused = try await server.send(
                    .put, "/tables/todoitem/a", json: ["id": "a", "text": "lost"],
                    headers: Self.headers([.ifMatch: stale]))
                #expect(refused.status == 412, "\(stale)")
                #expect(refused.object?["text"] as? String == "v1")
                #expect(refused.header("ETag") == "\"\(version)\"")
                let notDeleted = try await server.send(
                    .delete, "/tables/todoitem/a", headers: Self.headers([.ifMatch: stale]))
                #expect(notDeleted.status == 412, "\(stale)")
            }
            let replaced = try await server.send(
                .put, "/tables/todoitem/a", json: ["id": "a", "text": "v2"],
                headers: Self.headers([.ifMatch: "\"\(version)\""]))
            #expect(replaced.status == 200)
            #expect(replaced.object?["text"] as? String == "v2")
            let newVersion = try #require(replaced.object?["version"] as? String)
            #expect(newVersion != version)
            let any = try await server.send(
                .put, "/tables/todoitem/a", json: ["id": "a", "text": "v3"], headers: Self.headers([.ifMatch: "*"]))
            #expect(any.status == 200)
            let missing = try await server.send(
                .put, "/tables/todoitem/nobody", json: ["text": "x"], headers: Self.headers([.ifMatch: "*"]))
            #expect(missing.status == 404)
            let mismatch = try await server.send(
                .put, "/tables/todoitem/a", json: ["id": "b", "text": "x"], headers: Self.v3)
            #expect(mismatch.status == 400)
        }
    }

    @Test("If-None-Match: a match is 304 without a body on GET and 412 on writes", arguments: Backend.all)
    func ifNoneMatchIsNotModifiedOnReadsAndAFailedPreconditionOnWrites(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "v1"], headers: Self.v3)
            let tag = try #require(created.header("ETag"))
            for match in [tag, "*"] {
                let notModified = try await server.send(
                    .get, "/tables/todoitem/a", headers: Self.headers([.ifNoneMatch: match]))
                #expect(notModified.status == 304)
                #expect(notModified.body.isEmpty)
                #expect(notModified.header("ETag") == tag)
                let write = try await server.send(
                    .put, "/tables/todoitem/a", json: ["text": "x"], headers: Self.headers([.ifNoneMatch: match]))
                #expect(write.status == 412)
                #expect(write.object?["text"] as? String == "v1")
            }
            let changed = try await server.send(
                .get, "/tables/todoitem/a", headers: Self.headers([.ifNoneMatch: "\"other\""]))
            #expect(changed.status == 200)
            #expect(changed.header("ETag") == tag)
            let staleRead = try await server.send(
                .get, "/tables/todoitem/a", headers: Self.headers([.ifMatch: "\"other\""]))
            #expect(staleRead.status == 412)
        }
    }

    @Test("If-Modified-Since and If-Unmodified-Since compare whole seconds of updatedAt", arguments: Backend.all)
    func dateConditionsCompareWholeSeconds(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"], controlledClock: true) { server in
            let start = try #require(ProtocolDate.parse("2026-01-01T00:00:00.500Z"))
            server.clock.now = start
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "v1"], headers: Self.v3)
            let lastModified = try #require(created.header("Last-Modified"))
            #expect(lastModified == "Thu, 01 Jan 2026 00:00:00 GMT")
            let before = "Wed, 31 Dec 2025 23:59:59 GMT"
            let unchanged = try await server.send(
                .get, "/tables/todoitem/a", headers: Self.headers([.ifModifiedSince: lastModified]))
            #expect(unchanged.status == 304)
            let changed = try await server.send(
                .get, "/tables/todoitem/a", headers: Self.headers([.ifModifiedSince: before]))
            #expect(changed.status == 200)
            let stale = try await server.send(
                .put, "/tables/todoitem/a", json: ["text": "v2"], headers: Self.headers([.ifUnmodifiedSince: before]))
            #expect(stale.status == 412)
            #expect(stale.object?["text"] as? String == "v1")
            let current = try await server.send(
                .put, "/tables/todoitem/a", json: ["text": "v2"],
                headers: Self.headers([.ifUnmodifiedSince: lastModified]))
            #expect(current.status == 200)
        }
    }

    @Test("PATCH and POST to an item are 405 with a message in v3", arguments: Backend.all)
    func patchIsNotPartOfV3(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "v1"], headers: Self.v3)
            for method in [HTTPRequest.Method.patch, .post] {
                let refused = try await server.send(method, "/tables/todoitem/a", json: ["text": "x"], headers: Self.v3)
                #expect(refused.status == 405)
                #expect((refused.object?["error"] as? String)?.contains("PUT") == true)
                #expect(refused.header("Allow")?.contains("PUT") == true)
            }
            let collectionPut = try await server.send(.put, "/tables/todoitem", json: ["text": "x"], headers: Self.v3)
            #expect(collectionPut.status == 405)
            #expect(collectionPut.header("Allow") == "GET, POST, OPTIONS")
        }
    }

    @Test(
        "DELETE is 204; the soft-deleted row is 410 unless __includedeleted=true, and PUT there brings it back",
        arguments: Backend.all)
    func softDeletedRowsAreGone(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "v1"], headers: Self.v3)
            let deleted = try await server.send(.delete, "/tables/todoitem/a", headers: Self.v3)
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(try await server.send(.get, "/tables/todoitem/a", headers: Self.v3).status == 410)
            #expect(try await server.send(.delete, "/tables/todoitem/a", headers: Self.v3).status == 410)
            #expect(
                try await server.send(.put, "/tables/todoitem/a", json: ["text": "x"], headers: Self.v3).status == 410)
            let shown = try await server.send(.get, "/tables/todoitem/a?__includedeleted=TRUE", headers: Self.v3)
            #expect(shown.status == 200)
            #expect(shown.object?["deleted"] as? Bool == true)
            let list = try await server.send(.get, "/tables/todoitem", headers: Self.v3)
            #expect((list.object?["items"] as? [Any])?.isEmpty == true)
            let back = try await server.send(
                .put, "/tables/todoitem/a?__includedeleted=true", json: ["id": "a", "text": "back"], headers: Self.v3)
            #expect(back.status == 200)
            #expect(back.object?["deleted"] as? Bool == false)
            #expect(back.object?["text"] as? String == "back")
            #expect(try await server.send(.delete, "/tables/todoitem/missing", headers: Self.v3).status == 404)
        }
    }

    @Test(
        "Undeclared tables page by the page size without $top and up to the maximum with it; nextLink follows",
        arguments: Backend.all)
    func undeclaredTablesPageBySizeAndMaximum(_ backend: Backend) async throws {
        try await withTestServer(
            backend, pageSize: 2, tables: ["todoitem"], configure: { $0.maximumTop = 3 }
        ) { server in
            for index in 0..<5 {
                _ = try await server.send(.post, "/tables/todoitem", json: ["id": "r\(index)"], headers: Self.v3)
            }
            func page(_ query: String) async throws -> (ids: [String], count: Int?, next: String?) {
                let reply = try await server.send(.get, "/tables/todoitem?" + query, headers: Self.v3)
                let object = try #require(reply.object, "\(reply.status) \(reply.text)")
                let ids = (object["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                return (ids, object["count"] as? Int, object["nextLink"] as? String)
            }
            let first = try await page("$count=true")
            #expect(first.ids == ["r0", "r1"])
            #expect(first.count == 5)
            #expect(first.next.map(DatasyncFixtures.parameters) == ["$count": ["true"], "$skip": ["2"]])
            let capped = try await page("$top=4&$orderby=id%20desc")
            #expect(capped.ids == ["r4", "r3", "r2"])
            let next = try #require(capped.next)
            #expect(DatasyncFixtures.parameters(next) == ["$orderby": ["id desc"], "$skip": ["3"], "$top": ["1"]])
            let last = try await page(next)
            #expect(last.ids == ["r1"])
            #expect(last.next == nil)
            // In updatedAt order (PostgreSQL starts each page after the row the last one ended at).
            var query = "$orderby=updatedAt"
            var seen: [String] = []
            var pages = 0
            while pages < 5 {
                let next = try await page(query)
                seen += next.ids
                pages += 1
                guard let link = next.next else { break }
                query = link
            }
            #expect(seen == ["r0", "r1", "r2", "r3", "r4"])
            #expect(pages == 3)
            #expect(try await server.send(.get, "/tables/todoitem?$top=128001", headers: Self.v3).status == 400)
            #expect(try await server.send(.get, "/tables/todoitem?$top=128000", headers: Self.v3).status == 200)
            #expect(try await server.send(.get, "/tables/todoitem?$top=4").status == 400, "v2 keeps its maximum")
        }
    }

    @Test(
        "The Datasync client's incremental pull query is answered: updatedAt gt a cast token, deleted rows included",
        arguments: Backend.all)
    func datasyncClientPullQueryIsAnswered(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            var stamps: [String] = []
            for id in ["a", "b", "c"] {
                let created = try await server.send(.post, "/tables/todoitem", json: ["id": id], headers: Self.v3)
                stamps.append(try #require(created.object?["updatedAt"] as? String))
            }
            _ = try await server.send(.delete, "/tables/todoitem/b", headers: Self.v3)
            // As PullOperationManager.PrepareQueryDescription writes it.
            let query =
                "$filter=(updatedAt gt cast(\(stamps[0]),Edm.DateTimeOffset))&$orderby=updatedAt&$count=true"
                + "&__includedeleted=true"
            let reply = try await server.send(
                .get, "/tables/todoitem?" + DatasyncFixtures.encoded(query), headers: Self.v3)
            let page = try #require(reply.object, "\(reply.status) \(reply.text)")
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? String } == ["c", "b"])
            #expect(items.map { $0["deleted"] as? Bool } == [false, true])
            #expect(page["count"] as? Int == 2)
            #expect(page["nextLink"] is NSNull)
        }
    }

    @Test(
        "A PUT from a client that does not know a column keeps that column's value", arguments: Backend.all)
    func putKeepsTheColumnsItsBodyLeavesOut(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            // Version 2 of an app wrote priority; version 1, which has no priority, edits the text.
            let written = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "v1", "priority": 5], headers: Self.v3)
            let version = try #require(written.object?["version"] as? String)
            let replaced = try await server.send(
                .put, "/tables/todoitem/a", json: ["id": "a", "text": "v2"],
                headers: Self.headers([.ifMatch: "\"\(version)\""]))
            #expect(replaced.status == 200)
            #expect(replaced.object?["priority"] as? Double == 5)
            #expect(replaced.object?["text"] as? String == "v2")
            // A null the client sends is a value like any other.
            let cleared = try await server.send(
                .put, "/tables/todoitem/a", json: ["id": "a", "text": "v3", "priority": NSNull()], headers: Self.v3)
            #expect(cleared.object?["priority"] is NSNull)
        }
    }

    @Test("A table declared putReplaces nulls the columns a PUT leaves out", arguments: Backend.all)
    func putReplacesTheWholeItemWhereDeclared(_ backend: Backend) async throws {
        let schema = try ServiceSchema(json: Data(#"{"todoitem": {"putReplaces": true}}"#.utf8))
        try await withTestServer(backend, tables: ["todoitem"], configure: { $0.schema = schema }) { server in
            _ = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "v1", "complete": true], headers: Self.v3)
            let replaced = try await server.send(.put, "/tables/todoitem/a", json: ["text": "v2"], headers: Self.v3)
            #expect(replaced.status == 200)
            #expect(replaced.object?["complete"] is NSNull)
            #expect(replaced.object?["text"] as? String == "v2")
        }
    }

    @Test(
        "A row written through v2 reads the same through v3, and a v3 write reads back through v2",
        arguments: Backend.all)
    func rowsRoundTripBetweenV2AndV3(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let v2Item = try #require(
                try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "é \"q\"", "n": 2.5]).object)
            let v3Item = try #require(try await server.send(.get, "/tables/todoitem/a", headers: Self.v3).object)
            for key in ["id", "updatedAt", "version", "deleted", "text", "n"] {
                #expect((v2Item[key] as? NSObject) == (v3Item[key] as? NSObject), "\(key)")
            }
            #expect(v3Item["createdAt"] == nil)
            let page = try #require(try await server.send(.get, "/tables/todoitem", headers: Self.v3).object)
            let listed = try #require((page["items"] as? [[String: Any]])?.first)
            #expect(listed["version"] as? String == v2Item["version"] as? String)

            let version = try #require(v2Item["version"] as? String)
            let replaced = try #require(
                try await server.send(
                    .put, "/tables/todoitem/a", json: ["id": "a", "text": "from v3", "n": 3],
                    headers: Self.headers([.ifMatch: "\"\(version)\""])
                ).object)
            let back = try #require(try await server.send(.get, "/tables/todoitem/a").object)
            #expect(back["text"] as? String == "from v3")
            #expect(back["version"] as? String == replaced["version"] as? String)
            #expect(back["updatedAt"] as? String == replaced["updatedAt"] as? String)
            #expect(back["createdAt"] as? String == v2Item["createdAt"] as? String)
            // v2's PATCH with the version v3 answered.
            var ifMatch: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
            ifMatch[.ifMatch] = "\"\(back["version"] as? String ?? "")\""
            let patched = try await server.send(
                .patch, "/tables/todoitem/a", json: ["text": "v2 again"], headers: ifMatch)
            #expect(patched.status == 200)
        }
    }
}
