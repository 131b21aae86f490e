import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import TestSupport
import Testing

/// Tables declared in a schema file (`todosync serve --schema`): typed columns, per-table page
/// size and soft delete, and the errors of a file that cannot be used.
@Suite("Declared tables")
struct DeclaredSchemaTests {
    static let schema = """
        {"things": {"pageSize": 2, "softDelete": false, "columns": {
            "count": "integer", "ratio": "number", "done": "boolean", "at": "datetime", "day": "date-only",
            "time": "time-of-day", "size": {"enum": ["S", "M", "L"]}, "name": "string"}}}
        """

    static func server(_ backend: Backend) async throws -> TestServer {
        let schema = try ServiceSchema(json: Data(Self.schema.utf8))
        return try await TestServer(backend) { $0.schema = schema }
    }

    @Test(
        "A value that does not fit a declared column is a 400 naming the column, in v2 and v3",
        arguments: Backend.all)
    func misfitValuesAreRefusedNamingTheColumn(_ backend: Backend) async throws {
        try await withStopping(Self.server(backend)) { server in
            let misfits: [(String, Any)] = [
                ("count", 1.5), ("count", "1"), ("ratio", "x"), ("done", "yes"), ("at", "yesterday"),
                ("day", "2020-13-01"), ("day", "2020-01-01T00:00:00Z"), ("time", "25:00"), ("size", "XL"), ("name", 3),
            ]
            for version in ["2.0.0", "3.0.0"] {
                for (column, value) in misfits {
                    let reply = try await server.send(
                        .post, "/tables/things", json: [column: value], headers: [ProtocolHeader.apiVersion: version])
                    #expect(reply.status == 400, "\(column) = \(value)")
                    #expect((reply.object?["error"] as? String)?.contains("'\(column)'") == true, "\(reply.text)")
                }
            }
            let stored = try await server.send(
                .post, "/tables/things",
                json: [
                    "id": "t", "count": 3, "ratio": 0.5, "done": true, "at": "2026-01-31T12:00:00+01:00",
                    "day": "2026-01-31", "time": "02:14", "size": "M", "name": NSNull(), "extra": "dynamic",
                ], headers: [ProtocolHeader.apiVersion: "3.0.0"])
            #expect(stored.status == 201, "\(stored.text)")
            let item = try #require(stored.object)
            #expect(item["at"] as? String == "2026-01-31T11:00:00.000Z")
            #expect(item["time"] as? String == "02:14:00.000")
            #expect(item["count"] as? Int == 3)
            #expect(item["extra"] as? String == "dynamic", "undeclared columns stay dynamic")
        }
    }

    @Test(
        "Declared tables page by their own size, sort enums by position and delete without soft delete",
        arguments: Backend.all)
    func declaredTablesPageSortAndDeleteAsDeclared(_ backend: Backend) async throws {
        try await withStopping(Self.server(backend)) { server in
            let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]
            for (id, size) in [("a", "L"), ("b", "S"), ("c", "M")] {
                _ = try await server.send(.post, "/tables/things", json: ["id": id, "size": size], headers: v3)
            }
            let page = try #require(try await server.send(.get, "/tables/things?$orderby=size", headers: v3).object)
            #expect((page["items"] as? [[String: Any]])?.map { $0["id"] as? String } == ["b", "c"])
            #expect(page["nextLink"] as? String == "$orderby=size&$skip=2")
            let v2 = try await server.send(.get, "/tables/things?$orderby=size%20desc")
            #expect(v2.array?.map { $0["id"] as? String } == ["a", "c"])
            #expect(try await server.send(.delete, "/tables/things/a", headers: v3).status == 204)
            #expect(try await server.send(.get, "/tables/things/a?__includedeleted=true", headers: v3).status == 404)
            #expect(try await server.send(.delete, "/tables/things/b").status == 200)
            #expect(try await server.send(.get, "/tables/things/b?__includeDeleted=true").status == 404)
        }
    }

    @Test(
        "Arithmetic divides declared integers as integers and by zero as null, on both backends",
        arguments: Backend.all)
    func arithmeticFollowsODataOnBothBackends(_ backend: Backend) async throws {
        try await withStopping(Self.server(backend)) { server in
            let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]
            for (id, count, ratio) in [("a", 7, 1.5), ("b", 4, 2.0)] {
                _ = try await server.send(
                    .post, "/tables/things", json: ["id": id, "count": count, "ratio": ratio], headers: v3)
            }
            let expectations: [(String, [String])] = [
                ("count div 2 eq 3", ["a"]), ("count div 2.0 eq 3.5", ["a"]), ("count mod 2 eq 1", ["a"]),
                ("(count sub 1) mul 2 eq 6", ["b"]), ("ratio div 2 eq 0.75", ["a"]), ("count div 0 eq 1", []),
                ("ceiling(ratio) eq 2 and floor(ratio) eq 1", ["a"]), ("round(count div 3.0) eq 2", ["a"]),
                ("id in ('b', 'z')", ["b"]),
            ]
            for (filter, ids) in expectations {
                let reply = try await server.send(
                    .get, "/tables/things?$filter=" + filter.replacingOccurrences(of: " ", with: "%20"), headers: v3)
                let found = (reply.object?["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                #expect(found == ids, "\(filter): \(reply.text)")
            }
        }
    }

    @Test("A schema file that cannot be used names the table and column")
    func badSchemaFilesNameTheTableAndColumn() throws {
        let bad: [(String, String)] = [
            (#"{"movies": {"columns": {"year": "int"}}}"#, "Table 'movies', column 'year'"),
            (#"{"movies": {"columns": {"rating": {"enum": ["G", "it's"]}}}}"#, "Table 'movies', column 'rating'"),
            (#"{"movies": {"columns": {"updatedAt": "datetime"}}}"#, "Table 'movies', column 'updatedAt'"),
            (#"{"movies": {"pageSize": 0}}"#, "Table 'movies'"),
            (#"{"1movies": {}}"#, "Table '1movies'"),
            (#"{"movies": {"colums": {}}}"#, "Table 'movies'"),
            ("[1]", "JSON object"),
        ]
        for (json, expected) in bad {
            #expect {
                try ServiceSchema(json: Data(json.utf8))
            } throws: { error in
                (error as? ServiceSchemaError)?.description.contains(expected) == true
            }
        }
    }

    @Test(
        "A declaration that does not fit the stored table stops the service, naming table and column",
        arguments: Backend.all)
    func declarationThatContradictsTheStoredTableStopsTheService(_ backend: Backend) async throws {
        let first = try await TestServer(backend)
        _ = try await first.send(.post, "/tables/things", json: ["id": "a", "count": "three"])
        let database = first.database
        await first.started.stop()
        defer { first.folder.remove() }
        var configuration = TableService.Configuration(database: database)
        configuration.schema = try ServiceSchema(json: Data(#"{"things": {"columns": {"count": "integer"}}}"#.utf8))
        do {
            let service = try await TestService(configuration)
            await service.stop()
            Issue.record("the service started with a schema that contradicts the stored table")
        } catch {
            let message = "\(error)"
            #expect(message.contains("'things'") && message.contains("'count'"), "\(message)")
        }
    }
}
