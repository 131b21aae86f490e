import Foundation
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// The sync client against a table service that keeps its tables in PostgreSQL, served by two
/// instances: what one device pushes through one instance, another pulls through the other, and a
/// concurrent edit is a conflict the client resolves.
@Suite(
    .enabled(if: TestPostgres.isRequired, "needs the PostgreSQL cluster of the test command"), .timeLimit(.minutes(10)))
struct PostgresServiceTests {
    @Test func twoDevicesSyncThroughTwoInstancesAndResolveAConflict() async throws {
        try await withStopping(TestService.postgres(poolSize: 4)) { first in
            try await withStopping(first.anotherInstance()) { second in
                let folder = try TemporaryFolder()
                let phone = try SyncContext.temporary(in: folder, remote: URL(string: first.url)!, name: "phone.sqlite")
                let tablet = try SyncContext.temporary(
                    in: folder, remote: URL(string: second.url)!, name: "tablet.sqlite")
                for index in 0..<120 {
                    try await phone.table("todoitem").insert([
                        "id": .string("item-\(index)"), "text": .string("todo \(index)"),
                    ])
                }
                #expect(try await phone.push().pushed.count == 120)
                let pulled = try await tablet.table("todoitem").pull(
                    queryId: "all", settings: PullSettings(pageSize: 25))
                #expect(pulled.received == 120)
                #expect(try tablet.table("todoitem").item(id: "item-7")?.text == "todo 7")

                // Both edit item-7; the phone pushes first, so the tablet's push is a conflict.
                try await phone.table("todoitem").update(["id": "item-7", "text": "phone's text"])
                try await tablet.table("todoitem").update(["id": "item-7", "text": "tablet's text"])
                #expect(try await phone.push().pushed.count == 1)
                let clash = try await tablet.push()
                #expect(clash.conflicts.count == 1)
                let conflict = try #require(try tablet.conflicts.all().first)
                #expect(conflict.serverItem?.text == "phone's text")
                _ = try await tablet.conflicts.resolve(conflict.id, with: .useClient)
                #expect(try tablet.operations.all().isEmpty)

                let again = try await phone.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 25))
                #expect(try phone.table("todoitem").item(id: "item-7")?.text == "tablet's text")
                #expect(again.received >= 1)
                #expect(try await tablet.table("todoitem").pull(queryId: "all").received >= 1)
                #expect(try phone.table("todoitem").count() == 120)
                #expect(try tablet.table("todoitem").count() == 120)
            }
        }
    }
}
