import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// Auto-sync that follows the service's change channel: a change on one device reaches another's
/// store at once, with the polling interval an hour long, so that polling cannot explain it.
@Suite(.timeLimit(.minutes(10))) struct LiveSyncTests {
    static func device(_ service: TestService, live: LiveMode = .auto) async throws -> TestDashboard {
        try await TestDashboard(remote: .url(service.endpoint, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.live = live
        }
    }

    /// Waits, without a fixed pause, until `context`'s store satisfies `condition` (it is looked at
    /// after each of the store's commits).
    static func waitForStore(_ context: SyncContext, _ condition: @Sendable () throws -> Bool) async throws {
        let changes = context.storeChanges()
        if try condition() { return }
        for await _ in changes where try condition() { return }
    }

    @Test func anEditOnOneDeviceReachesTheOtherWithoutPolling() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        let a = try await Self.device(service)
        let b = try await Self.device(service)
        for device in [a, b] {
            _ = try await device.waitForAutoSync("following the change channel") { $0.follow == .live }
        }
        try await a.dashboard.context.table("todoitem").insert(["id": "from-a", "text": "made on A"])
        try await Self.waitForStore(b.dashboard.context) {
            try b.dashboard.context.table("todoitem").item(id: "from-a")?["text"] == "made on A"
        }
        try await b.dashboard.context.table("todoitem").update(["id": "from-a", "text": "changed on B"])
        try await Self.waitForStore(a.dashboard.context) {
            try a.dashboard.context.table("todoitem").item(id: "from-a")?["text"] == "changed on B"
        }
        let api = try await b.client.send(.get, "/api/status")
        #expect(api.text.contains(#""follow":"live""#))
        await a.stop()
        await b.stop()
        await service.stop()
    }

    /// `todosync serve` stopped and started again on its port and database: the device's stream
    /// ends, is opened again from its cursor once the service is back, the edit made meanwhile goes
    /// out, the row written after the restart comes in, and `verify` finds the two sides equal.
    @Test func aDeviceFollowsThroughAServiceRestartAndMissesNoRow() async throws {
        let folder = try TemporaryFolder()
        let first = try await TestService.sqlite(in: folder)
        let device = try await Self.device(first)
        let context = device.dashboard.context
        _ = try await device.waitForAutoSync("following the change channel") { $0.follow == .live }
        _ = try await first.rest.insert(["id": "before", "text": "written before the restart"])
        try await Self.waitForStore(context) { try context.table("todoitem").item(id: "before") != nil }

        await first.stop()
        try await context.table("todoitem").update(["id": "before", "text": "edited while the service was down"])
        // The same port, as a restarted `todosync serve` has (its database file, too).
        let second = try await TestService(first.configuration, port: first.port)
        _ = try await second.rest.insert(["id": "after", "text": "written after the restart"])

        try await Self.waitForStore(context) {
            try context.table("todoitem").item(id: "after") != nil && context.operations.all().isEmpty
        }
        let edited = try await second.rest.get("todoitem", "before")
        #expect(edited?["text"] == "edited while the service was down")
        let report = try await context.verify("todoitem")
        #expect(report.differences.isEmpty, "\(report.summary)")
        await device.stop()
        await second.stop()
    }

    @Test func withLiveOffAutoSyncPolls() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        let device = try await Self.device(service, live: .off)
        let status = try await device.waitForAutoSync("the first sync") { $0.nextAttemptAt != nil }
        #expect(status.follow == .polling)
        #expect(service.running.service.subscriberCount == 0)
        await device.stop()
        await service.stop()
    }
}
