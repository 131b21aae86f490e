import Foundation
import GRDB
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// A service that goes back in time (restored from a copy of its database, with a new epoch) loses
/// nothing silently: each client that synced past the copy reads its tables again, keeps its queue,
/// and turns every row the service lost or holds older values of into a conflict to decide.
@Suite(.timeLimit(.minutes(10)))
struct ServiceRestoreTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// `client sync`: a push when changes wait, then a pull of each synced table.
    func sync(_ context: SyncContext) async throws {
        _ = try await context.run(.sync(queryId: "all", pageSize: 50))
    }

    /// A copy of the service's database as it is now.
    func copyDatabase(_ service: TestService) async throws -> (TestService, String, Int64) {
        let copy = folder.file("copy.sqlite")
        let (running, moment) = try await service.copyingDatabase(to: copy)
        return (running, copy, moment)
    }

    func restore(_ service: TestService, from copy: String, to moment: Int64) async throws -> TestService {
        try await service.restored(from: copy, to: moment)
    }

    @Test func threeClientsThatSyncedPastTheCopyLoseNoRowAndDecideEachOne() async throws {
        var service = try await TestService.forSync(in: folder)
        try await service.rest.seed(5)
        let clients = try ["a", "b", "c"].map { name in
            try SyncContext.temporary(in: folder, remote: service.endpoint, name: "\(name).sqlite")
        }
        for client in clients { try await sync(client) }
        let (a, b, c) = (clients[0], clients[1], clients[2])

        let (running, copy, moment) = try await copyDatabase(service)
        service = running
        // After the copy: A adds three rows, B changes two, and every client pulls them.
        for index in 0..<3 { _ = try await a.table("todoitem").insert(["id": .string("new-\(index)"), "text": "new"]) }
        for index in 0..<2 {
            _ = try await b.table("todoitem").update(["id": .string("row-00000\(index)"), "text": "changed after"])
        }
        for client in clients { try await sync(client) }
        for client in clients { try await sync(client) }
        // A edits a row the copy has as it was, offline: that change is queued when the service goes back.
        _ = try await a.table("todoitem").update(["id": "row-000004", "text": "queued through the restore"])

        service = try await restore(service, from: copy, to: moment)
        for client in clients { try await sync(client) }

        for client in clients {
            // Nothing silently gone: every row written stays until someone decides.
            #expect(try client.table("todoitem").count() == 8)
            let conflicts = try client.conflicts.all()
            #expect(
                conflicts.filter(\.goneFromService).map(\.operation.itemId).sorted() == ["new-0", "new-1", "new-2"])
            #expect(conflicts.filter(\.restoredOlder).map(\.operation.itemId).sorted() == ["row-000000", "row-000001"])
            #expect(conflicts.count == 5)
            let notice = try #require(try client.restoreNotice())
            #expect(notice.gone == 3 && notice.older == 2)
            #expect(notice.restoredTo.map { Int64($0.timeIntervalSince1970 * 1000) } == moment)
            #expect(try client.restoreConflictCounts() == (gone: 3, older: 2))
        }
        // The queue was kept, and pushed after the reconcile.
        #expect(try await service.rest.get("todoitem", "row-000004")?["text"] == "queued through the restore")
        #expect(try a.operations.all().filter { $0.state != .conflict }.isEmpty)

        // A keeps its values (the rows go back to the service), B and C take the service's.
        for conflict in try a.conflicts.all() { try await a.conflicts.resolve(conflict.id, with: .useClient) }
        for client in [b, c] {
            for conflict in try client.conflicts.all() {
                try await client.conflicts.resolve(conflict.id, with: .useServer)
            }
        }
        for client in clients { try await sync(client) }
        #expect(try await service.rest.all().count == 8)
        for client in clients {
            #expect(try client.conflicts.all().isEmpty)
            #expect(try client.table("todoitem").count() == 8)
            #expect(try client.table("todoitem").item(id: "row-000001")?.text == "changed after")
            let report = try await client.verify("todoitem")
            #expect(report.differences.isEmpty, "\(report.summary)")
        }
        for client in clients { try await client.close() }
        await service.stop()
    }

    @Test func aServiceThatKeepsItsEpochIsNotReconciled() async throws {
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(3)
        let client = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await sync(client)
        await service.stop()
        let restarted = try await TestService(service.configuration, port: service.port)
        try await service.rest.insert(["id": "after", "text": "after the restart"])
        try await sync(client)
        #expect(try client.restoreNotice() == nil)
        #expect(try client.conflicts.all().isEmpty)
        #expect(try client.table("todoitem").count() == 4)
        try await client.close()
        await restarted.stop()
    }

    @Test func everyAnswerCarriesTheEpochAndARestartKeepsIt() async throws {
        let service = try await TestService.forSync(in: folder)
        let http = TestHTTPClient()
        let header = "x-todosync-epoch"
        let first = try await http.send(.get, service.url + "/tables/todoitem")
        let epoch = try #require(first.headers[header].flatMap(ServiceEpoch.init(header:)))
        #expect(epoch.restoredTo == nil && epoch.id.count == 32)
        let missing = try await http.send(.get, service.url + "/tables/todoitem/nothing")
        #expect(missing.status == 404 && missing.headers[header] == epoch.header)
        await service.stop()
        let again = try await TestService(service.configuration, port: service.port)
        let later = try await TestHTTPClient().send(.get, again.url + "/tables/todoitem")
        #expect(later.headers[header] == epoch.header)
        await again.stop()
    }
}

extension ServiceRestoreTests {
    /// A command started after the restore knows no epoch yet: before it pushes, it asks.
    @Test func aClientStartedAfterTheRestoreReconcilesBeforeItPushes() async throws {
        var service = try await TestService.forSync(in: folder)
        try await service.rest.seed(2)
        let path = folder.file("late.sqlite")
        var client = try SyncContext.temporary(in: folder, remote: service.endpoint, name: "late.sqlite")
        try await sync(client)
        let (running, copy, moment) = try await copyDatabase(service)
        service = running
        _ = try await client.table("todoitem").insert(["id": "late", "text": "written after the copy"])
        try await sync(client)
        try await client.close()

        service = try await restore(service, from: copy, to: moment)
        client = try SyncContext(path: path, configuration: SyncConfiguration(remoteURL: service.endpoint))
        _ = try await client.table("todoitem").insert(["id": "offline", "text": "queued before the restore was seen"])
        _ = try await client.push()

        #expect(try client.conflicts.all().map(\.operation.itemId) == ["late"])
        #expect(try await service.rest.get("todoitem", "offline") != nil)
        #expect(try await service.rest.get("todoitem", "late") == nil)
        try await client.close()
        await service.stop()
    }
}
