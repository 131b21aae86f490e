import Foundation
import SyncProtocol
import TestSupport
import Testing

/// Every answer names the epoch of the service's data (`X-TodoSync-Epoch`): one per database, the
/// same on every instance, and a new one once the data went back in time.
struct EpochTests {
    @Test(arguments: Backend.all)
    func theEpochIsTheDatabasesAndOnEveryAnswer(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let list = try await server.send(.get, "/tables/todoitem")
            let epoch = try #require(list.header("X-TodoSync-Epoch").flatMap(ServiceEpoch.init(header:)))
            #expect(epoch.restoredTo == nil)
            let refused = try await server.send(.post, "/tables/todoitem", json: ["id": 3])
            #expect(refused.status == 400 && refused.header("X-TodoSync-Epoch") == epoch.header)
            let document = try await server.send(.get, "/openapi.json")
            #expect(document.header("X-TodoSync-Epoch") == epoch.header)
            #expect(document.text.contains("\"X-TodoSync-Epoch\""))
            if backend == .postgres {
                try await withTestServer(.postgres, sharing: server) { second in
                    let answer = try await second.send(.get, "/tables/todoitem")
                    #expect(answer.header("X-TodoSync-Epoch") == epoch.header)
                }
            }
        }
    }

    /// A recovery to an earlier point (point-in-time restore, or a failover) ends on a new timeline:
    /// the epoch's row then names another one than the cluster's, and each instance that connects
    /// again begins or reads the new epoch, restored to the newest row.
    @Test(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
    func aRecoveredClusterAnswersWithANewEpochOnEveryInstance() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { first in
            try await withTestServer(.postgres, sharing: first) { second in
                let created = try await first.send(.post, "/tables/todoitem", json: ["id": "kept"])
                let newest = try #require((created.object?["updatedAt"] as? String).flatMap { ProtocolDate.parse($0) })
                let before = try #require(
                    try await first.send(.get, "/tables/todoitem").header("X-TodoSync-Epoch"))
                guard case .postgres(let location) = first.database else { return }
                let url = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
                // What the recovered database holds: the epoch's row, begun on the timeline before.
                _ = try await TestPostgres.textRows(
                    "UPDATE \"__epoch\" SET \"timeline\" = \"timeline\" - 1 RETURNING \"id\"", url: url)
                // A recovery drops every connection.
                _ = try await TestPostgres.textRows(
                    """
                    SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """, url: url)
                var epochs: [String?] = []
                try await eventually("both instances answer with a new epoch", every: .milliseconds(50)) {
                    epochs = []
                    for server in [first, second] {
                        epochs.append(try? await server.send(.get, "/tables/todoitem").header("X-TodoSync-Epoch"))
                    }
                    return epochs.allSatisfy { $0 != nil && $0 != before }
                }
                #expect(epochs[0] == epochs[1])
                let after = try #require(epochs[0].flatMap { ServiceEpoch(header: $0) })
                #expect(after.header != before)
                #expect(after.restoredTo == newest)
            }
        }
    }
}
