import Foundation
import HTTPServer
import SyncProtocol
import TableService
import TestSupport
import Testing

/// The dashboard end to end with its table service on PostgreSQL: a todo added in the page is
/// pushed by a sync and lands in the database, and a row written by another client is pulled.
@Suite(.enabled(if: TestPostgres.isRequired, "needs the PostgreSQL cluster of the test command"))
struct PostgresDashboardTests {
    @Test func addedTodoIsPushedIntoPostgreSQLAndAnotherClientsRowIsPulled() async throws {
        let url = try await TestPostgres.freshDatabaseURL()
        try await withTestDashboard(database: .postgres(try PostgresLocation(url: url, poolSize: 4))) { harness in
            let added = try await harness.submit("/items", ["field:text": "into postgres"])
            #expect(added.status == 303)
            let inserted = try await harness.client.send(
                .post, "/tables/todoitem",
                json: Data(#"{"id":"from-elsewhere","text":"written by another client"}"#.utf8),
                headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(inserted.status == 201, "\(inserted.text)")

            let token = try await harness.csrfToken()
            let started = try await harness.client.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token])
            #expect(started.status == 202)
            await harness.dashboard.waitUntilIdle()

            let rows = try await TestPostgres.textRows(
                "SELECT \"id\", \"text\" FROM \"todoitem\" ORDER BY \"text\"", url: url)
            #expect(rows.map { $0[1] } == ["into postgres", "written by another client"])
            #expect(try harness.dashboard.context.status().pending == 0)
            let page = try await harness.client.send(.get, "/")
            #expect(page.text.contains("into postgres"))
            #expect(page.text.contains("written by another client"))
        }
    }
}
