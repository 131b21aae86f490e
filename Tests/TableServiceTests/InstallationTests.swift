import Foundation
import HTTPTypes
import SyncProtocol
import TestSupport
import Testing

@testable @_spi(Testing) import TableService

/// The installations seen writing are kept in the service's database: a restart keeps the list,
/// and instances sharing a PostgreSQL database list each other's.
@Suite("Installations")
struct InstallationTests {
    /// A v3 write's headers from installation `id`.
    static func headers(_ id: String) -> HTTPFields {
        var headers = SchemaChangeTests.v3
        headers[ProtocolHeader.installationID] = id
        return headers
    }

    /// A server under schema 2 whose database has one row under schema 1.
    static func renamedServer(_ backend: Backend) async throws -> TestServer {
        let (first, _) = try await SchemaChangeTests.serverWithRows(backend, rows: 1)
        await first.started.stop()
        return try await TestServer(backend, sharing: first, page: true) {
            $0.schema = try! SchemaChangeTests.schema(SchemaChangeTests.schema2)
        }
    }

    @Test("A restart keeps the installations that still write a renamed column's old name", arguments: Backend.all)
    func restartKeepsTheInstallations(_ backend: Backend) async throws {
        let server = try await Self.renamedServer(backend)
        defer { server.folder.remove() }
        let old = try await server.send(
            .post, "/tables/todo", json: ["id": "a", "text": "x"], headers: Self.headers("old-1"))
        #expect(old.status == 201)
        let new = try await server.send(
            .post, "/tables/todo", json: ["id": "b", "title": "y"], headers: Self.headers("new-2"))
        #expect(new.status == 201)
        await server.started.stop()

        try await withTestServer(
            backend, sharing: server, page: true,
            configure: {
                $0.schema = try! SchemaChangeTests.schema(SchemaChangeTests.schema2)
            }
        ) { restarted in
            let installations = await restarted.running.service.fleet.records()
            #expect(installations.map(\.id).sorted() == ["new-2", "old-1"])
            #expect(installations.first { $0.id == "old-1" }?.oldNames.keys.sorted() == ["todo.text"])
            let page = try await restarted.send(.get, "/service", headers: [:]).text
            #expect(page.contains("old-1") && page.contains("todo.text"), "\(page)")
            let metrics = try await restarted.send(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains("todosync_installations_writing_old_shape 1"), "\(metrics)")
        }
    }

    @Test("Two PostgreSQL instances list each other's installations")
    func instancesSeeEachOthersInstallations() async throws {
        guard TestPostgres.isRequired else { return }
        try await withStopping(Self.renamedServer(.postgres)) { a in
            try await withTestServer(
                .postgres, sharing: a, page: true,
                configure: {
                    $0.schema = try! SchemaChangeTests.schema(SchemaChangeTests.schema2)
                }
            ) { b in
                _ = try await a.send(
                    .post, "/tables/todo", json: ["id": "a", "text": "x"], headers: Self.headers("phone-a"))
                _ = try await b.send(
                    .post, "/tables/todo", json: ["id": "b", "title": "y"], headers: Self.headers("phone-b"))
                // Each instance saves what it noted within a second: poll, with a deadline.
                for server in [a, b] {
                    try await eventually("each instance lists both installations", every: .milliseconds(100)) {
                        await Set(server.running.service.fleet.records().map(\.id)) == ["phone-a", "phone-b"]
                    }
                }
                let page = try await b.send(.get, "/service", headers: [:]).text
                #expect(page.contains("phone-a") && page.contains("todo.text"), "\(page)")
                #expect(!page.contains("phone-b"), "phone-b writes the new shape")
            }
        }
    }
}
