import Foundation
import SyncProtocol
@_spi(Testing) import TableService
import TestSupport
import Testing

@testable import SyncClient

/// Devices in the field while the service's schema changes: clients that queued edits under the
/// old schema reconnect to the new one; every edit lands, no value is reset, each store follows the
/// renamed column, and the service names the installations that still wrote the old name.
@Suite(.timeLimit(.minutes(10)))
struct SchemaChangeSyncTests {
    /// Version 1: `text`, `complete`, a whole-number `estimate`.
    static let schema1 = #"{"todo": {"columns": {"text": "string", "complete": "boolean", "estimate": "integer"}}}"#
    /// Version 2: `priority` with default 3, `title` renamed from `text`, `estimate` widened.
    static let schema2 = """
        {"todo": {"columns": {"title": {"type": "string", "renamedFrom": "text"}, "complete": "boolean",
            "estimate": "number", "priority": {"type": "integer", "default": 3}}}}
        """

    static func service(_ schema: String, path: String, port: Int = 0) async throws -> TestService {
        try await service(schema, database: .sqlite(path: path), port: port)
    }

    static func service(_ schema: String, database: TableService.Database, port: Int = 0) async throws -> TestService {
        var configuration = TableService.Configuration(
            database: database, templatesFolder: ProjectResources.templatesFolder)
        configuration.schema = try ServiceSchema(json: Data(schema.utf8))
        return try await TestService(configuration, port: port)
    }

    /// Where the service keeps its tables in a test.
    enum Store: String, CaseIterable, Sendable {
        case sqlite, postgres

        /// A new database in `folder`, or a fresh PostgreSQL database of the test command's cluster.
        func database(in folder: TemporaryFolder) async throws -> TableService.Database {
            switch self {
            case .sqlite: .sqlite(path: folder.file("service.sqlite"))
            case .postgres: try await TestPostgres.freshDatabase(poolSize: 4)
            }
        }

        /// SQLite always; PostgreSQL when the test command started a cluster (always under CI).
        var isAvailable: Bool { self == .sqlite || TestPostgres.isRequired }
    }

    @Test(arguments: Store.allCases)
    func threeOfflineClientsEditsUnderTheOldSchemaAllLandUnderTheNewOne(_ store: Store) async throws {
        guard store.isAvailable else { return }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try await store.database(in: folder)
        let old = try await Self.service(Self.schema1, database: database)
        for client in 0..<3 {
            for index in 0..<10 {
                _ = try await old.rest.insert(
                    [
                        "id": .string("c\(client)-\(index)"), "text": .string("todo \(client) \(index)"),
                        "complete": false, "estimate": .number(Double(index)),
                    ], table: "todo")
            }
        }
        let contexts = try (0..<3).map { client in
            try SyncContext(
                path: folder.file("client\(client).sqlite"), tables: [TableDescription(name: "todo", columns: [])],
                configuration: SyncConfiguration(remoteURL: old.endpoint, tableProtocol: .v3))
        }
        for context in contexts { _ = try await context.table("todo").pull(queryId: "all") }
        let port = old.port
        await old.stop()

        // Offline: ten edits each, under schema 1.
        for (client, context) in contexts.enumerated() {
            for index in 0..<10 {
                _ = try await context.table("todo").update([
                    "id": .string("c\(client)-\(index)"), "text": .string("edited \(client) \(index)"),
                    "estimate": .number(Double(index + 1)),
                ])
            }
        }
        try await withStopping(Self.service(Self.schema2, database: database, port: port)) { new in
            await new.running.service.schemaBackfillsFinished()

            for (client, context) in contexts.enumerated() {
                let pushed = try await context.push()
                #expect(pushed.pushed.count == 10 && pushed.conflicts.isEmpty, "client \(client): \(pushed)")
                _ = try await context.table("todo").pull(queryId: "all")
                let report = try await context.verify("todo")
                #expect(report.differences.isEmpty, "client \(client): \(report.summary)")
            }
            let rows = try await new.rest.all("todo")
            #expect(rows.count == 30)
            for row in rows {
                let id = row["id"]?.stringValue ?? ""
                let parts = id.dropFirst().split(separator: "-")
                #expect(row["title"]?.stringValue == "edited \(parts[0]) \(parts[1])", "\(row)")
                #expect(row["estimate"] == .number(Double(Int(parts[1])! + 1)), "\(row)")
                #expect(row["priority"] == .number(3) && row["complete"] == .bool(false), "no value reset: \(row)")
                #expect(row["text"] == nil)
            }
            for context in contexts {
                let item = try #require(try context.table("todo").item(id: "c0-0"))
                #expect(item["title"]?.stringValue == "edited 0 0" && item["text"] == nil, "the store follows: \(item)")
                #expect(try context.operations.all().isEmpty)
                let changes = try context.columnChanges(of: "todo").columns
                #expect(changes["title"] == .renamed(from: "text") && changes["priority"] == .added, "\(changes)")
            }
            let page = String(decoding: try await TableClient(base: new.url).send(.get, "/service").body, as: UTF8.self)
            for context in contexts {
                #expect(page.contains(context.installationID), "the service page names \(context.installationID)")
            }
            #expect(page.contains("todo.text"))
        }
    }

    @Test func aPulledPageRenamesTheColumnInPlaceAfterTheQueuedChangeWentOut() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("service.sqlite")
        let old = try await Self.service(Self.schema1, path: path)
        _ = try await old.rest.insert(["id": "a", "text": "milk", "complete": false, "estimate": 1], table: "todo")
        _ = try await old.rest.insert(["id": "b", "text": "bread", "complete": false, "estimate": 2], table: "todo")
        let context = try SyncContext(
            path: folder.file("client.sqlite"), tables: [TableDescription(name: "todo", columns: [])],
            configuration: SyncConfiguration(remoteURL: old.endpoint, tableProtocol: .v3))
        _ = try await context.table("todo").pull(queryId: "all")
        let port = old.port
        await old.stop()
        _ = try await context.table("todo").update(["id": "a", "text": "oat milk"])

        try await withStopping(Self.service(Self.schema2, path: path, port: port)) { new in
            await new.running.service.schemaBackfillsFinished()
            // A pull pushes the table's queued change first, then stores the pages.
            _ = try await context.table("todo").pull(queryId: "all")
            let table = try context.description(of: "todo")
            #expect(table.columnType("title") == .text && table.columnType("text") == nil, "renamed in place")
            #expect(try context.table("todo").item(id: "b")?["title"]?.stringValue == "bread")
            #expect(try context.table("todo").item(id: "a")?["title"]?.stringValue == "oat milk")
            #expect(try context.operations.all().isEmpty)
            let a = try #require(try await new.rest.get("todo", "a"))
            #expect(a["title"]?.stringValue == "oat milk" && a["priority"] == .number(3), "\(a)")
            #expect(try await context.verify("todo").differences.isEmpty)
        }
    }

    @Test func aDateWrittenBeforeTheColumnWidenedReachesTheClientAsTheStartOfItsDay() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("service.sqlite")
        let before = #"{"todo": {"columns": {"text": "string", "due": "date-only"}}}"#
        let after = #"{"todo": {"columns": {"text": "string", "due": "datetime"}}}"#
        let old = try await Self.service(before, path: path)
        _ = try await old.rest.insert(["id": "a", "text": "taxes", "due": "2026-04-15"], table: "todo")
        _ = try await old.rest.insert(["id": "b", "text": "no date"], table: "todo")
        let context = try SyncContext(
            path: folder.file("client.sqlite"), tables: [TableDescription(name: "todo", columns: [])],
            configuration: SyncConfiguration(remoteURL: old.endpoint, tableProtocol: .v3))
        _ = try await context.table("todo").pull(queryId: "all")
        #expect(try context.table("todo").item(id: "a")?["due"]?.stringValue == "2026-04-15")
        let port = old.port
        await old.stop()

        try await withStopping(Self.service(after, path: path, port: port)) { new in
            await new.running.service.schemaBackfillsFinished()
            let pulled = try await context.table("todo").pull(queryId: "all")
            #expect(pulled.received == 1, "only the row with a date is stamped: \(pulled)")
            #expect(try context.table("todo").item(id: "a")?["due"]?.stringValue == "2026-04-15T00:00:00.000Z")
            let served = try #require(try await new.rest.get("todo", "a"))
            #expect(served["due"]?.stringValue == "2026-04-15T00:00:00.000Z", "\(served)")
            // A datetime write after the change is kept as written.
            _ = try await new.rest.insert(
                ["id": "c", "text": "call", "due": "2026-05-01T09:30:00.000Z"], table: "todo")
            _ = try await context.table("todo").pull(queryId: "all")
            #expect(try context.table("todo").item(id: "c")?["due"]?.stringValue == "2026-05-01T09:30:00.000Z")
            #expect(try await context.verify("todo").differences.isEmpty)
        }
    }

    @Test func queuedBodiesMoveFromAFormerColumnNameToTheNewOne() {
        let rename = { (text: String) in SyncOperationQueue.renamingKey(in: text, from: "text", to: "title") }
        #expect(rename(#"{"id":"a","text":"milk"}"#) == #"{"id":"a","title":"milk"}"#)
        #expect(rename(#"[{"text":"x"},{"title":"kept","text":"old"}]"#) == #"[{"title":"x"},{"title":"kept"}]"#)
        #expect(rename(#"["complete","text"]"#) == #"["complete","title"]"#)
        #expect(rename("not json") == "not json")
    }

    @Test func theInstallationIdIsMadeOnceAndKeptWithTheStore() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = try SyncContext.temporary(in: folder)
        let id = first.installationID
        #expect(UUID(uuidString: id) != nil)
        let again = try await first.reopened(at: folder.file("store.sqlite"), remote: unreachableURL)
        #expect(again.installationID == id)
        let other = try SyncContext.temporary(in: folder, name: "other.sqlite")
        #expect(other.installationID != id)
    }
}
