import Foundation
import GRDB
import SyncClient
import TableService

/// A client's reconcile after its service went back in time (issue 51): a service of ROWS rows,
/// a store that pulled them all (the baseline, timed), then the service restored — its file given a
/// new epoch, as `todosync restore` does, and 1 % of its rows gone and 1 % older — and the store's
/// next pull, which reads every row again by keyset and makes the conflicts. Target: ≤ 2× the pull.
enum RestoreReconcile {
    static func run(rows: Int, pageSize: Int, work: String) async throws -> [String] {
        let path = work + "/restored-service.sqlite"
        var service = try TableService.start(
            .init(database: .sqlite(path: path), tables: ["todoitem"]), port: 0, quiet: true)
        let port = service.port
        try await seedTodos(rows, base: service.url)
        let context = try SyncContext(
            path: work + "/restored-client.sqlite", configuration: .init(remoteURL: URL(string: service.url)!))
        let pullStart = ContinuousClock.now
        let pulled = try await context.table("todoitem").pull(
            queryId: "bench", settings: PullSettings(pageSize: pageSize))
        let pull = seconds(since: pullStart)
        precondition(pulled.received == rows, "pulled \(pulled.received) of \(rows)")
        await context.listIndexesCaughtUp()

        await service.stop()
        let database = try DatabaseQueue(path: path)
        try await database.write { db in
            // What a restore to before the last 1 % of the writes looks like to the client.
            try db.execute(sql: "DELETE FROM todoitem WHERE rowid % 100 = 0")
            try db.execute(
                sql:
                    "UPDATE todoitem SET text = 'older', version = 'v-older', updatedAt = updatedAt - 1000 WHERE rowid % 100 = 1"
            )
            try db.execute(
                sql: """
                    DELETE FROM "__epoch";
                    INSERT INTO "__epoch" ("id", "restoredTo", "beganAt") VALUES ('bench-restore', 0, 0);
                    """)
        }
        try database.close()
        service = try TableService.start(
            .init(database: .sqlite(path: path), tables: ["todoitem"]), port: port, quiet: true)
        let reconcileStart = ContinuousClock.now
        _ = try await context.table("todoitem").pull(queryId: "bench", settings: PullSettings(pageSize: pageSize))
        let reconcile = seconds(since: reconcileStart)
        let notice = try context.restoreNotice()
        precondition(
            notice?.gone == rows / 100 && notice?.older == rows / 100, "reconcile found \(String(describing: notice))")
        try await context.close()
        await service.stop()
        return [
            "reconcile \(rows) rows after a restore of the service (1 % gone, 1 % older: \(rows / 50) conflicts): "
                + String(
                    format: "%.2f s; its pull before: %.2f s;  reconcile / pull = %.2f   [target ≤ 2]",
                    reconcile, pull, reconcile / pull)
        ]
    }
}
