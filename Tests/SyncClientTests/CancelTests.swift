import FaultProxy
import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Every push and pull can be cancelled: it stops within moments with "Cancelled", each operation
/// left as after a lost answer, and the next sync converges.
struct CancelTests {
    /// A cancelled job stops well within 2 s on an idle machine (under 0.3 s here). The suite runs
    /// many tests at once on two shared cores, so this bound only tells a stop from a hang: that the
    /// job stopped early shows in what it left undone.
    private static let stopBound: TimeInterval = 30

    /// Cancels the context's running job once `done` items of it are through, and returns when it did.
    private func cancel(
        _ context: SyncContext, once activity: SyncProgress.Activity, did done: Int
    ) -> Task<Date, Never> {
        let updates = context.progressUpdates()
        return Task {
            for await progress in updates where progress.activity == activity && progress.done >= done { break }
            context.jobs.cancel()
            return Date()
        }
    }

    @Test func cancelledPushStopsAndTheNextPushConvergesWithoutDuplicates() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        // Every insert takes 100 ms on the way to the service (a slow link: the proxy's delay).
        let proxy = try await service.proxy(plan: FaultPlan([FaultRule(.delay(milliseconds: 100), method: "POST")]))
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        for index in 0..<40 { try await context.table("todoitem").insert(["id": .string("t\(index)"), "text": "x"]) }
        // Cancelled once two answers came back, however loaded the machine is.
        let cancelled = cancel(context, once: .pushing, did: 2)
        await #expect(throws: SyncError.stopped(.cancelled)) { try await context.push() }
        let stopped = Date()
        #expect(stopped.timeIntervalSince(await cancelled.value) < Self.stopBound)
        #expect(context.lastSync?.message.hasPrefix("Cancelled") == true)
        let left = try context.operations.all()
        #expect(!left.isEmpty && left.count < 40)
        // Those on the wire when the push stopped (a window's worth at most) may have reached the
        // service; those marked in flight with them but not sent are pending again.
        #expect(left.filter { $0.state == .attempted }.count <= SyncConfiguration.defaultPushWindow)
        #expect(left.allSatisfy { $0.state == .pending || $0.state == .attempted })

        let result = try await context.push()
        #expect(result.conflicts.isEmpty && result.failed.isEmpty)
        #expect(try context.operations.all().isEmpty)
        let rows = try await service.rest.all()
        #expect(rows.count == 40)
        #expect(Set(rows.compactMap { $0["id"]?.stringValue }).count == 40)
    }

    @Test func cancelledPullOf100kRowsStopsAndTheNextPullBringsTheRest() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.insert(["id": "first", "text": "x", "complete": false])
        try withServiceDatabase(service) { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
                    INSERT INTO todoitem (id, createdAt, updatedAt, version, deleted, text, complete)
                    SELECT printf('bulk-%06d', i), 1700000000000 + i, 1700000000000 + i, 'v' || i, 0, 'row ' || i, 0
                    FROM n
                    """)
        }
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let todo = context.table("todoitem")
        let cancelled = cancel(context, once: .pulling, did: 1000)
        await #expect(throws: SyncError.stopped(.cancelled)) {
            try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 1000))
        }
        #expect(Date().timeIntervalSince(await cancelled.value) < Self.stopBound)
        let partial = try todo.count()
        #expect(partial < 100_000)
        let integrity = try context.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == "ok")

        let rest = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 1000))
        #expect(try todo.count() == 100_000)
        #expect(rest.received <= 100_000 - partial + 1000)
    }

    @Test func turningOfflineModeOnCancelsARunningPull() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.seed(200)
        // The first page comes back; the second one's answer is held until the client gives up.
        let proxy = try await service.proxy()
        let secondPage = proxy.holdAnswers(after: 1)
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let pull = Task {
            try await context.table("todoitem").pull(queryId: "q", settings: PullSettings(pageSize: 10))
        }
        await secondPage.wait()
        try await context.setOffline(true)
        let offline = Date()
        await #expect(throws: SyncError.stopped(.cancelled)) { try await pull.value }
        #expect(Date().timeIntervalSince(offline) < Self.stopBound)
        #expect(try context.table("todoitem").count() == 10)
    }

    @Test func cancellingWithNothingRunningDoesNothing() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext.temporary(in: folder)
        #expect(context.jobs.cancel() == false)
    }
}
