import Foundation
import HTTPTypes
import SyncProtocol
import TestSupport
import Testing

@testable @_spi(Testing) import TableService

/// Schema changes in the `--schema` file, applied at start: defaults, renames, widened types and
/// retired columns reach every row through incremental pull, old writers keep working, and a file
/// that would lose data is refused with its line, changing nothing.
@Suite("Schema changes")
struct SchemaChangeTests {
    static let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]

    /// Version 1 of the app: `text`, `complete`, a whole-number `estimate`.
    static let schema1 = """
        {"todo": {"columns": {
            "text": "string",
            "complete": "boolean",
            "estimate": "integer"}}}
        """

    /// Version 2: `title` renamed from `text`, `estimate` widened, `priority` with a default.
    static let schema2 = """
        {"todo": {"columns": {
            "title": {"type": "string", "renamedFrom": "text"},
            "complete": "boolean",
            "estimate": "number",
            "priority": {"type": "integer", "default": 3}}}}
        """

    static func schema(_ json: String) throws -> ServiceSchema {
        try ServiceSchema(json: Data(json.utf8))
    }

    /// A server under schema 1 holding `rows` rows `r0…`, and the newest `updatedAt` it answered.
    static func serverWithRows(
        _ backend: Backend, rows: Int, schema: String = schema1
    ) async throws -> (TestServer, String) {
        let server = try await TestServer(backend) { $0.schema = try! Self.schema(schema) }
        var newest = ""
        for index in 0..<rows {
            let reply = try await server.send(
                .post, "/tables/todo",
                json: ["id": "r\(index)", "text": "t\(index)", "complete": false, "estimate": index],
                headers: v3)
            #expect(reply.status == 201, "\(reply.text)")
            newest = max(newest, reply.object?["updatedAt"] as? String ?? "")
        }
        return (server, newest)
    }

    /// The rows a client pulling incrementally after `updatedAt` receives.
    static func pulled(_ server: TestServer, after updatedAt: String) async throws -> [[String: Any]] {
        let filter = "updatedAt gt '\(updatedAt)'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let reply = try await server.send(
            .get, "/tables/todo?$filter=\(filter)&$orderby=updatedAt&__includedeleted=true&$top=1000", headers: v3)
        return reply.object?["items"] as? [[String: Any]] ?? []
    }

    @Test("A rename, a default and a widened type reach every row through incremental pull", arguments: Backend.all)
    func schemaChangesReachEveryRowThroughIncrementalPull(_ backend: Backend) async throws {
        let (first, newest) = try await Self.serverWithRows(backend, rows: 5)
        await first.started.stop()
        defer { first.folder.remove() }
        try await withTestServer(
            backend, sharing: first, configure: { $0.schema = try! Self.schema(Self.schema2) }
        ) { second in
            await second.running.service.schemaBackfillsFinished()

            let rows = try await Self.pulled(second, after: newest)
            #expect(rows.count == 5)
            for row in rows {
                let index = (row["id"] as? String)?.dropFirst() ?? ""
                #expect(row["title"] as? String == "t\(index)")
                #expect(row["priority"] as? Int == 3)
                #expect(row["text"] == nil, "the old name is not answered")
            }
            let widened = try await second.send(
                .post, "/tables/todo", json: ["id": "w", "estimate": 1.5], headers: Self.v3)
            #expect(widened.status == 201, "\(widened.text)")
            #expect(widened.object?["priority"] as? Int == 3, "an insert gets the default")
        }
    }

    @Test(
        "An old client's writes under a renamed column's name are stored under the new one, and its PUT keeps the new column",
        arguments: Backend.all)
    func oldClientsWritesAreBroughtForward(_ backend: Backend) async throws {
        let (first, _) = try await Self.serverWithRows(backend, rows: 2)
        await first.started.stop()
        defer { first.folder.remove() }
        try await withTestServer(
            backend, sharing: first, configure: { $0.schema = try! Self.schema(Self.schema2) }
        ) { server in
            await server.running.service.schemaBackfillsFinished()

            var newClient = Self.v3
            newClient[.ifMatch] = try await server.send(.get, "/tables/todo/r1", headers: Self.v3).header("ETag")
            let set = try await server.send(
                .put, "/tables/todo/r1", json: ["id": "r1", "title": "t1", "priority": 5], headers: newClient)
            #expect(set.status == 200, "\(set.text)")

            var oldClient = Self.v3
            oldClient[ProtocolHeader.installationID] = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
            oldClient[.ifMatch] = set.header("ETag")
            let put = try await server.send(
                .put, "/tables/todo/r1", json: ["id": "r1", "text": "edited", "complete": true, "estimate": 1],
                headers: oldClient)
            #expect(put.status == 200, "\(put.text)")
            #expect(put.object?["title"] as? String == "edited")
            #expect(put.object?["priority"] as? Int == 5, "the PUT of a client that does not know priority keeps it")
            #expect(put.object?["text"] == nil)
        }
    }

    @Test(
        "An app that read a row before the schema changed writes it with the version it read, without a conflict",
        arguments: Backend.all)
    func writeReadBeforeTheBackfillIsNoConflict(_ backend: Backend) async throws {
        let (first, _) = try await Self.serverWithRows(backend, rows: 2)
        let tags = [
            try await first.send(.get, "/tables/todo/r0", headers: Self.v3).header("ETag"),
            try await first.send(.get, "/tables/todo/r1", headers: Self.v3).header("ETag"),
        ]
        await first.started.stop()
        defer { first.folder.remove() }
        try await withTestServer(
            backend, sharing: first, configure: { $0.schema = try! Self.schema(Self.schema2) }
        ) { server in
            await server.running.service.schemaBackfillsFinished()

            var stale = Self.v3
            stale[.ifMatch] = tags[0]
            let put = try await server.send(
                .put, "/tables/todo/r0", json: ["id": "r0", "text": "edited", "complete": true, "estimate": 0],
                headers: stale)
            #expect(put.status == 200, "\(put.text)")
            #expect(put.object?["title"] as? String == "edited" && put.object?["priority"] as? Int == 3)
            let again = try await server.send(
                .put, "/tables/todo/r0", json: ["id": "r0", "text": "again"], headers: stale)
            #expect(again.status == 412, "a version older than a real write is a conflict")
            stale[.ifMatch] = tags[1]
            let delete = try await server.send(.delete, "/tables/todo/r1", headers: stale)
            #expect(delete.status == 204, "\(delete.text)")
        }
    }

    @Test(
        "A retired column is left out of answers, writes to it are ignored, and its values stay stored",
        arguments: Backend.all)
    func retiredColumnIsHiddenAndKept(_ backend: Backend) async throws {
        let (first, _) = try await Self.serverWithRows(backend, rows: 1)
        await first.started.stop()
        defer { first.folder.remove() }
        let retired = #"{"todo": {"columns": {"text": "string", "complete": {"type": "boolean", "retired": true}}}}"#
        try await withTestServer(
            backend, sharing: first, configure: { $0.schema = try! Self.schema(retired) }
        ) { server in
            let row = try await server.send(.get, "/tables/todo/r0", headers: Self.v3)
            #expect(row.status == 200)
            #expect(row.object?["complete"] == nil && row.object?["text"] as? String == "t0", "\(row.text)")
            let write = try await server.send(
                .post, "/tables/todo", json: ["id": "n", "text": "x", "complete": true], headers: Self.v3)
            #expect(write.status == 201, "\(write.text)")
            #expect(write.object?["complete"] == nil)
            let page = try await server.send(.get, "/tables/todo", headers: Self.v3)
            #expect(!page.text.contains("complete"), "\(page.text)")
        }
    }

    @Test(
        "A schema file that narrows a type or renames onto an existing column is refused with its line, changing nothing",
        arguments: Backend.all)
    func refusedSchemaChangesNameTheLineAndChangeNothing(_ backend: Backend) async throws {
        let widened = Self.schema1.replacingOccurrences(of: #""estimate": "integer""#, with: #""estimate": "number""#)
        let (first, _) = try await Self.serverWithRows(backend, rows: 1, schema: widened)
        _ = try await first.send(.post, "/tables/todo", json: ["id": "d", "title": "dynamic"], headers: Self.v3)
        await first.started.stop()
        defer { first.folder.remove() }
        let refusals: [(String, String)] = [
            (Self.schema1, "Line 4: Table 'todo', column 'estimate': the type changes from number to integer"),
            (
                #"{"todo": {"columns": {"title": {"type": "string", "renamedFrom": "text"}}}}"#,
                "Line 1: Table 'todo', column 'title' is renamed from 'text', but the table already has a column 'title'"
            ),
        ]
        for (json, expected) in refusals {
            var configuration = TableService.Configuration(database: first.database)
            configuration.schema = try Self.schema(json)
            do {
                let service = try await TestService(configuration)
                await service.stop()
                Issue.record("the service started with \(json)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        try await withTestServer(
            backend, sharing: first, configure: { $0.schema = try! Self.schema(widened) }
        ) { again in
            let row = try await again.send(.get, "/tables/todo/r0", headers: Self.v3)
            #expect(row.object?["text"] as? String == "t0", "nothing was renamed: \(row.text)")
            let changes = try await again.running.service.store.schemaChanges()
            #expect(changes.allSatisfy { $0.kind == .declared }, "\(changes.map(\.summary))")
        }
    }

    @Test("A default of the wrong type is refused when the file is read, naming its line")
    func defaultOfTheWrongTypeIsRefused() throws {
        let json = """
            {"todo": {"columns": {
                "priority": {"type": "integer", "default": "high"}}}}
            """
        #expect {
            try Self.schema(json)
        } throws: { error in
            "\(error)".hasPrefix("Line 2: Table 'todo', column 'priority': the default \"high\" is not a whole number")
        }
    }

    @Test("--plan tells the changes and the rows to backfill, and changes nothing")
    func planTellsTheChangesAndChangesNothing() async throws {
        let (first, _) = try await Self.serverWithRows(.sqlite, rows: 4)
        await first.started.stop()
        defer { first.folder.remove() }
        let report = try await TableService.planSchemaChanges(try Self.schema(Self.schema2), database: first.database)
        let lines = report.lines.map { "\($0.summary) [\($0.rowsToBackfill)]" }
        #expect(lines.contains("todo.title: renamed from text [4]"), "\(lines)")
        #expect(lines.contains("todo.priority: default 3 for rows without a value [4]"), "\(lines)")
        #expect(lines.contains("todo.estimate: widened from integer to number [0]"), "\(lines)")
        #expect(report.rowsToBackfill == 8)
        #expect(report.description.contains("Nothing was changed"))
        try await withTestServer(
            .sqlite, sharing: first, configure: { $0.schema = try! Self.schema(Self.schema1) }
        ) { again throws in
            #expect(try await again.send(.get, "/tables/todo/r0", headers: Self.v3).object?["text"] as? String == "t0")
        }
    }

    @Test("A backfill stopped after a batch resumes at the next start and stamps each row once", arguments: Backend.all)
    func interruptedBackfillResumesAndStampsEachRowOnce(_ backend: Backend) async throws {
        let (first, newest) = try await Self.serverWithRows(backend, rows: 7)
        await first.started.stop()
        defer { first.folder.remove() }
        let stopped = try await TestServer(backend, sharing: first) {
            $0.schema = try! Self.schema(Self.schema2)
            $0.backfillBatchSize = 2
            $0.backfillBatchesPerStart = 1
        }
        await stopped.running.service.schemaBackfillsFinished()
        #expect(try await Self.pulled(stopped, after: newest).count == 2, "one batch of two rows")
        await stopped.started.stop()

        try await withTestServer(
            backend, sharing: first,
            configure: {
                $0.schema = try! Self.schema(Self.schema2)
                $0.backfillBatchSize = 2
            }
        ) { resumed in
            await resumed.running.service.schemaBackfillsFinished()
            let rows = try await Self.pulled(resumed, after: newest)
            #expect(rows.count == 7)
            #expect(rows.allSatisfy { $0["priority"] as? Int == 3 && $0["title"] != nil })
            let changes = try await resumed.running.service.store.schemaChanges()
            for change in changes where change.kind == .renamed || change.kind == .defaulted {
                #expect(change.backfill == .done && change.stamped == 7, "\(change)")
            }
        }
    }

    @Test("Two PostgreSQL instances starting with the same new schema apply it once")
    func twoInstancesApplyTheSameSchemaOnce() async throws {
        guard TestPostgres.isRequired else { return }
        let (first, newest) = try await Self.serverWithRows(.postgres, rows: 6)
        await first.started.stop()
        defer { first.folder.remove() }
        async let one = TestServer(.postgres, sharing: first) {
            $0.schema = try! Self.schema(Self.schema2)
            $0.backfillBatchSize = 2
        }
        async let two = TestServer(.postgres, sharing: first) {
            $0.schema = try! Self.schema(Self.schema2)
            $0.backfillBatchSize = 2
        }
        let (a, b) = try await (one, two)
        try await withStopping(a) { a in
            try await withStopping(b) { b in
                await a.running.service.schemaBackfillsFinished()
                await b.running.service.schemaBackfillsFinished()
                let rows = try await Self.pulled(a, after: newest)
                #expect(rows.count == 6)
                #expect(
                    rows.allSatisfy { ($0["title"] as? String)?.hasPrefix("t") == true && $0["priority"] as? Int == 3 })
                let changes = try await a.running.service.store.schemaChanges()
                #expect(changes.filter { $0.kind == .renamed }.count == 1)
                for change in changes where change.kind == .renamed || change.kind == .defaulted {
                    #expect(change.stamped == 6, "each row stamped once: \(change)")
                }
            }
        }
    }

    @Test("The service page and /metrics name the installations that still write a renamed column's old name")
    func installationsWritingTheOldShapeAreListed() async throws {
        let (first, _) = try await Self.serverWithRows(.sqlite, rows: 1)
        await first.started.stop()
        defer { first.folder.remove() }
        try await withTestServer(
            .sqlite, sharing: first, page: true,
            configure: {
                $0.schema = try! Self.schema(Self.schema2)
            }
        ) { server in
            var old = Self.v3
            old[ProtocolHeader.installationID] = "old-phone-1"
            _ = try await server.send(.post, "/tables/todo", json: ["id": "a", "text": "x"], headers: old)
            var new = Self.v3
            new[ProtocolHeader.installationID] = "new-phone-2"
            _ = try await server.send(.post, "/tables/todo", json: ["id": "b", "title": "y"], headers: new)
            let page = try await server.send(.get, "/service", headers: [:]).text
            #expect(page.contains("old-phone-1") && page.contains("todo.text"), "\(page)")
            #expect(!page.contains("new-phone-2"))
            #expect(page.contains("todo.title: renamed from text"), "the applied schema changes are listed")
            let metrics = try await server.send(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains("todosync_installations_writing_old_shape 1"), "\(metrics)")
            #expect(metrics.contains("todosync_installations 2"))
        }
    }
}
