import FaultProxy
import Foundation
import HTTPServer
import SyncClient
import Synchronization
import TestSupport
import Testing

@testable import Dashboard

/// A sync that auto-sync could not start because a verify ran (one background job at a time)
/// happens as soon as the verify ends, not an interval later.
@Suite(.timeLimit(.minutes(10))) struct AutoSyncAfterVerifyTests {
    @Test func aSyncDueWhileAVerifyRunsStartsWhenTheVerifyEnds() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder)
        let proxy = try await service.proxy()
        // Auto-sync off at first: nothing syncs until the test turns it on. Its clock never moves:
        // the sync after the verify starts because the verify ended, not because time passed.
        let clock = ManualWallClock()
        let harness = try await TestDashboard(remote: .url(proxy.endpoint, applicationKey: nil)) { configuration in
            // Polling: live, the service's notice of the pushed row would add a sync (see LiveSyncTests).
            configuration.live = .off
            configuration.clock = clock
            configuration.autoSyncTiming = AutoSyncSchedule.Timing(
                backoffBase: 3600, backoffCap: 3600, debounce: 0.05, probeEvery: 3600, fixedJitter: 1)
        }
        let events = SyncEventLog(harness)
        let context = harness.dashboard.context
        try await context.table("todoitem").insert(["id": "queued", "text": "waits for the verify"])

        // The verify's reads wait on the wire until the test lets them go.
        let (reading, release) = (TestEvent(), TestEvent())
        proxy.intercept { request, _ in
            guard request.method == "GET" else { return nil }
            reading.signal()
            await release.wait()
            return nil
        }
        #expect(try await harness.submit("/verify", ["back": "/verify"]).status == 303)
        await reading.wait()
        #expect(harness.dashboard.sync.runningKind == .verify)

        // Turned on now, auto-sync syncs at once; the verify holds the one background job.
        let token = try await harness.csrfToken()
        let on = try await harness.client.send(
            .post, "/api/settings", json: Data(#"{"autoSyncInterval": 3600}"#.utf8),
            headers: [CSRFProtection.headerName: token])
        #expect(on.status == 200)
        let blocked = try #require(harness.dashboard.autoSync?.status)
        #expect(events.all.isEmpty, "no sync started beside the verify")
        #expect(
            blocked.nextAttemptAt.map { $0.timeIntervalSince(clock.now) < 60 } ?? true,
            "the sync is not put off for an interval: \(blocked)")

        release.signal()
        _ = try await harness.waitForAutoSync("the queue drained after the verify") { status in
            try status.consecutiveFailures == 0 && context.status().pending == 0 && status.nextAttemptAt != nil
        }
        #expect(events.all == ["auto", "ok"])
        #expect(try await service.rest.get("todoitem", "queued")?["text"] == "waits for the verify")
        #expect(harness.dashboard.sync.lastVerifyOutcome?.reports.map(\.table) == ["todoitem"], "the verify ended")
        await harness.stop()
        await proxy.stop()
        await service.stop()
    }
}
