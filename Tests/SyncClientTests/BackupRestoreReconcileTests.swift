import Foundation
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// Issue 51 end to end: a service backed up with `--backup-dir`, restored with `todosync restore`'s
/// code to a time three clients synced past. The plan's counts are the conflicts each client gets,
/// nothing is silently gone, and after the decisions each client's verify finds no difference.
@Suite(.timeLimit(.minutes(10)))
struct BackupRestoreReconcileTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    func sync(_ context: SyncContext) async throws {
        _ = try await context.run(.sync(queryId: "all", pageSize: 50))
    }

    func service(backup: String, port: Int = 0) async throws -> TestService {
        var configuration = TableService.Configuration(
            database: .sqlite(path: folder.file("service.sqlite")), tables: ["todoitem"])
        configuration.backup = BackupSettings(folder: folder.file(backup))
        return try await TestService(configuration, port: port)
    }

    @Test func thePlanCountsTheConflictsEachClientGetsAfterARestoreFromTheBackup() async throws {
        var service = try await service(backup: "backup")
        try await service.rest.seed(5)
        let clients = try ["a", "b", "c"].map { name in
            try SyncContext.temporary(in: folder, remote: service.endpoint, name: "\(name).sqlite")
        }
        for client in clients { try await sync(client) }
        let (a, b) = (clients[0], clients[1])
        let backup = try #require(service.running.service.backup)
        try await backup.shipNow()
        // T: every commit so far is shipped; what follows commits after it (the clock has left T's millisecond).
        let moment = Self.now()
        while Self.now() <= moment { await Task.yield() }

        for index in 0..<3 { _ = try await a.table("todoitem").insert(["id": .string("new-\(index)"), "text": "new"]) }
        for index in 0..<2 {
            _ = try await b.table("todoitem").update(["id": .string("row-00000\(index)"), "text": "changed after"])
        }
        for client in clients { try await sync(client) }
        for client in clients { try await sync(client) }
        _ = try await a.table("todoitem").update(["id": "row-000004", "text": "queued through the restore"])
        await service.stop()
        try await backup.shipNow()

        let plan = try ServiceRestore.plan(
            backupFolder: folder.file("backup"), database: folder.file("service.sqlite"), to: .at(moment),
            now: Self.now())
        #expect(plan.tables.map(\.table) == ["todoitem"])
        let counts = try #require(plan.tables.first)
        #expect(counts.vanish == 3 && counts.older == 2 && counts.comeBack == 0, "\(plan)")
        #expect(plan.devices.count == 3, "\(plan)")

        let outcome = try ServiceRestore.restore(
            backupFolder: folder.file("backup"), database: folder.file("service.sqlite"), to: .at(moment),
            now: Self.now())
        #expect(outcome.keptAs != nil)
        // A restored database is a new one for backups.
        service = try await self.service(backup: "backup-after-restore", port: service.port)
        for client in clients { try await sync(client) }

        for client in clients {
            #expect(try client.table("todoitem").count() == 8)
            let conflicts = try client.conflicts.all()
            #expect(conflicts.filter(\.goneFromService).count == counts.vanish)
            #expect(conflicts.filter(\.restoredOlder).count == counts.older)
        }
        #expect(try await service.rest.get("todoitem", "row-000004")?["text"] == "queued through the restore")

        for conflict in try a.conflicts.all() { try await a.conflicts.resolve(conflict.id, with: .useClient) }
        for client in clients.dropFirst() {
            for conflict in try client.conflicts.all() {
                try await client.conflicts.resolve(conflict.id, with: .useServer)
            }
        }
        for client in clients { try await sync(client) }
        #expect(try await service.rest.all().count == 8)
        for client in clients {
            #expect(try client.conflicts.all().isEmpty)
            let report = try await client.verify("todoitem")
            #expect(report.differences.isEmpty, "\(report.summary)")
        }
        for client in clients { try await client.close() }
        await service.stop()
    }
}
