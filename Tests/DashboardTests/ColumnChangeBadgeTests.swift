import Foundation
import SyncClient
@_spi(Testing) import TableService
import TestSupport
import Testing

@testable import Dashboard

/// The Data page marks the columns the service's schema changed: added, renamed and retired, as
/// the pages of the changed table announce them (`Todosync-Column-Changes`).
@Suite(.timeLimit(.minutes(10))) struct ColumnChangeBadgeTests {
    static let before = #"{"todo": {"columns": {"text": "string", "notes": "string", "complete": "boolean"}}}"#
    static let after = """
        {"todo": {"columns": {"title": {"type": "string", "renamedFrom": "text"},
            "notes": {"type": "string", "retired": true}, "complete": "boolean",
            "priority": {"type": "integer", "default": 3}}}}
        """

    static func service(_ schema: String, path: String, port: Int = 0) async throws -> TestService {
        var configuration = TableService.Configuration(database: .sqlite(path: path))
        configuration.schema = try ServiceSchema(json: Data(schema.utf8))
        return try await TestService(configuration, port: port)
    }

    /// The heading cell of `column` in the list's table head.
    static func heading(_ column: String, in page: String) -> String? {
        guard let head = page.range(of: "<thead>"),
            let end = page.range(of: "</thead>", range: head.upperBound..<page.endIndex)
        else { return nil }
        return page[head.upperBound..<end.lowerBound].components(separatedBy: "<th ").first {
            $0.contains(">\(column)") || $0.contains(">\(column.prefix(1).uppercased() + column.dropFirst())")
        }
    }

    @Test func theDataPageMarksColumnsTheServiceAddedRenamedAndRetired() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("service.sqlite")
        let old = try await Self.service(Self.before, path: path)
        _ = try await old.rest.insert(
            ["id": "a", "text": "milk", "notes": "two litres", "complete": false], table: "todo")
        let harness = try await TestDashboard { $0.tables = ["todo"] }
        let context = harness.dashboard.context
        _ = try await context.setRemote(url: old.endpoint, applicationKey: nil)
        _ = try await context.table("todo").pull(queryId: "all")
        let unchanged = try await harness.client.send(.get, "/data/todo")
        #expect(unchanged.status == 200)
        #expect(!unchanged.text.contains("by the service") && !unchanged.text.contains("renamed from"))
        let port = old.port
        await old.stop()

        try await withStopping(Self.service(Self.after, path: path, port: port)) { new in
            await new.running.service.schemaBackfillsFinished()
            _ = try await context.table("todo").pull(queryId: "all")
            let page = try await harness.client.send(.get, "/data/todo")
            #expect(page.status == 200)
            let badge = #"<span class="badge" title="The service's schema changed this column">"#
            #expect(
                Self.heading("title", in: page.text)?.contains(badge + "renamed from text</span>") == true,
                "\(page.text)")
            #expect(Self.heading("priority", in: page.text)?.contains(badge + "added by the service</span>") == true)
            #expect(Self.heading("notes", in: page.text)?.contains(badge + "retired by the service</span>") == true)
            #expect(Self.heading("complete", in: page.text)?.contains(badge) == false, "an unchanged column has none")
            await harness.stop()
        }
    }
}
