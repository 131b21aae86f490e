import Foundation
import Logging
import PostgresNIO
import TestSupport
import Testing

@testable import TableService

/// PostgreSQL's writers do not wait for each other, so a write can commit after a later one: a
/// pull must stop before the later row while the earlier write is under way, or its cursor would
/// pass a row that then commits behind it (see `IncrementalPull.md`).
@Suite struct HorizonTests {
    @Test(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
    func aPullStopsBeforeARowThatAWriteStillUnderWayCouldCommitBehind() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { server in
            guard case .postgres(let location) = server.database else { return }
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "first"]).status == 201)
            let logger = Logger(label: "todosync.tests.horizon")
            let writer = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 9, logger: logger)
            defer { Task { try? await writer.close() } }
            // A write that took its stamp and has not committed yet (as SQL outside todosync must).
            try await writer.query("BEGIN", logger: logger)
            try await writer.query(
                """
                INSERT INTO todoitem ("id", "createdAt", "updatedAt", "version", "deleted")
                SELECT 'early', s, s, 'v', false FROM (SELECT "__todosync_stamp"() AS s) AS stamp
                """, logger: logger)
            // A later write, acknowledged while the early one is under way: stamped at or after it.
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "late"]).status == 201)

            func pulled() async throws -> [String] {
                let page = try await server.send(.get, "/tables/todoitem?$orderby=updatedAt&__includeDeleted=true")
                return try #require(page.array).compactMap { $0["id"] as? String }
            }
            func changeCursor() async throws -> ChangeCursor? {
                let reply = try await server.send(.get, "/tables/todoitem/$changes", headers: ChangeChannelTests.v2)
                return ChangeChannelTests.cursor(reply).flatMap(ChangeCursor.init(text:))
            }
            #expect(try await pulled() == ["first"])
            #expect(try await changeCursor()?.id == "first")

            try await writer.query("COMMIT", logger: logger)
            #expect(try await pulled() == ["first", "early", "late"])
            #expect(try await changeCursor()?.id == "late")
        }
    }
}
