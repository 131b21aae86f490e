import FaultProxy
import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import Dashboard

/// Auto-sync against real services: it drains the queue once a service that refused every connection
/// is back, backing off meanwhile; a refused sign-in stops it until the token changes; offline mode pauses it.
@Suite(.timeLimit(.minutes(10))) struct AutoSyncTests {
    /// Short waits, and the whole backoff ceiling each time, so that the waits are seen to grow.
    static let quick = AutoSyncSchedule.Timing(
        backoffBase: 0.2, backoffCap: 5, debounce: 0.05, probeEvery: 3600, fixedJitter: 1)
    /// The default backoff's first waits, whole, on a clock the test moves.
    static let planned = AutoSyncSchedule.Timing(
        backoffBase: 2, backoffCap: 300, debounce: 3, probeEvery: 3600, fixedJitter: 1)

    @Test func autoSyncDrainsTheQueueOnceTheStoppedServiceIsBack() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder)
        // The service goes down and comes back behind a proxy that keeps its port (a stopped
        // service's port may be taken by another test's service meanwhile).
        let proxy = try await service.proxy()
        let clock = ManualWallClock()
        let harness = try await TestDashboard(remote: .url(proxy.endpoint, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = Self.planned
            configuration.clock = clock
            // The polling schedule's backoff is what this test watches (LiveSyncTests has the live one).
            configuration.live = .off
        }
        // Every start and end of a sync, in order: never two at once.
        let events = SyncEventLog(harness)
        let context = harness.dashboard.context
        _ = try await harness.waitForAutoSync("the first sync") {
            $0.nextAttemptAt != nil && $0.consecutiveFailures == 0
        }

        proxy.setPlan(.always(.refuse))
        try await context.table("todoitem").insert(["id": "offline-edit", "text": "made while the service is down"])
        // The wait planned after each failure, seen before time moves on to it.
        var waits: [Int: TimeInterval] = [:]
        _ = try await harness.waitForAutoSync("three failures", log: events) { status in
            let failures = status.consecutiveFailures
            if failures > 0, waits[failures] == nil, let next = status.nextAttemptAt {
                waits[failures] = next.timeIntervalSince(clock.now)
            }
            if failures >= 3, waits[3] != nil { return true }
            if let next = status.nextAttemptAt { clock.advance(to: next) }
            return false
        }
        #expect(waits == [1: 2, 2: 4, 3: 8], "the base, then twice the last wait each time")
        let failing = try #require(harness.dashboard.autoSync?.status)
        #expect(failing.label == "next try in 8 s")
        #expect(failing.lastError?.contains("connection") == true, "\(failing.lastError ?? "")")
        let api = try await harness.client.send(.get, "/api/status")
        #expect(api.text.contains(#""autoSync":{"#) && api.text.contains(#""consecutiveFailures":3"#))
        #expect(api.text.contains(#""interval":3600"#) && api.text.contains(#""enabled":true"#))

        proxy.setPlan(.passThrough)
        _ = try await harness.waitForAutoSync("the queue drained") { status in
            if let next = status.nextAttemptAt, status.consecutiveFailures > 0 { clock.advance(to: next) }
            return try status.consecutiveFailures == 0 && context.status().pending == 0
        }
        #expect(try await service.rest.get("todoitem", "offline-edit")?["text"] == "made while the service is down")
        let log = events.all
        #expect(log.count >= 8, "\(log)")
        for (index, entry) in log.enumerated() {
            #expect(["auto", "manual"].contains(entry) == (index % 2 == 0), "starts and ends alternate: \(log)")
        }
        await harness.stop()
        await proxy.stop()
        await service.stop()
    }

    @Test func aServiceThatAnswersAgainIsSyncedWithAtOnceNotAtTheEndOfTheBackoff() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder)
        let proxy = try await service.proxy()
        let clock = ManualWallClock()
        let harness = try await TestDashboard(remote: .url(proxy.endpoint, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = AutoSyncSchedule.Timing(
                backoffBase: 3600, backoffCap: 3600, debounce: 0.05, probeEvery: 5, fixedJitter: 1)
            configuration.clock = clock
        }
        let context = harness.dashboard.context
        _ = try await harness.waitForAutoSync("the first sync") {
            $0.nextAttemptAt != nil && $0.consecutiveFailures == 0
        }
        proxy.setPlan(.always(.refuse))
        try await context.table("todoitem").insert(["id": "while-down", "text": "queued"])
        let down = try await harness.waitForAutoSync("a failure") { status in
            if status.consecutiveFailures == 0, let next = status.nextAttemptAt { clock.advance(to: next) }
            return status.consecutiveFailures >= 1
        }
        let backoffEnd = try #require(down.nextAttemptAt)

        proxy.setPlan(.passThrough)
        _ = try await harness.waitForAutoSync("the queue drained") { status in
            // Only the probes' time passes: 5 s at a time, an hour being 720 steps.
            clock.advance(by: 5)
            return try status.consecutiveFailures == 0 && context.status().pending == 0
        }
        #expect(clock.now < backoffEnd, "synced because the service answered, before the backoff's end")
        #expect(try await service.rest.get("todoitem", "while-down") != nil)
        let asked = try context.exchanges().exchanges.filter { $0.purpose == .reachability(table: "todoitem") }
        #expect(!asked.isEmpty && asked.allSatisfy { $0.target == "/tables/todoitem?$top=0" })
        await harness.stop()
        await proxy.stop()
        await service.stop()
    }

    @Test func aRefusedSignInStopsAutoSyncUntilTheTokenChanges() async throws {
        let refusing = try await MisbehavingService { _ in .json(401, #"{"error":"The token expired."}"#) }
        let harness = try await TestDashboard(remote: .url(refusing.url, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = Self.quick
            configuration.authToken = "expired-token-1111"
        }
        let stopped = try await harness.waitForAutoSync("stopped by the 401") {
            $0.label == "auto-sync stopped: sign in again"
        }
        #expect(stopped.nextAttemptAt == nil, "no attempt is planned: no hammering")
        #expect(stopped.lastError?.contains("401") == true)
        let asked = refusing.requests.count

        let saved = try await harness.submit(
            "/settings",
            [
                "remote": refusing.url.absoluteString, "pageSize": "50", "pushWindow": "16", "autoSync": "3600",
                "offline": "false", "authToken": "fresh-token-22222",
            ])
        #expect(saved.status == 303)
        // Other requests may still come with the old token (the change channel's), so look for the new one.
        try await eventually("tried again with the new token") {
            refusing.requests.dropFirst(asked).contains { $0.headers["x-zumo-auth"] == "fresh-token-22222" }
        }
        await harness.stop()
        await refusing.stop()
    }

    /// A service secured the ASP.NET Core way reads only `Authorization: Bearer`: choosing it in
    /// Settings sends the same token there, and auto-sync tries again at once.
    @Test func aTokenRefusedInOneHeaderIsSentInTheOtherOnceSettingsSaySo() async throws {
        let refusing = try await MisbehavingService { request in
            request.headers["authorization"] == "Bearer the-token-3333"
                ? .json(200, "[]") : .json(401, #"{"error":"No bearer token."}"#)
        }
        let harness = try await TestDashboard(remote: .url(refusing.url, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = Self.quick
            configuration.authToken = "the-token-3333"
        }
        _ = try await harness.waitForAutoSync("stopped by the 401") { $0.label == "auto-sync stopped: sign in again" }
        #expect(refusing.requests.last?.headers["x-zumo-auth"] == "the-token-3333", "zumo over v2 at first")
        let form = try await harness.client.send(.get, "/settings")
        #expect(form.text.contains(#"<option value="auto" selected>"#))

        let fields = [
            "remote": refusing.url.absoluteString, "pageSize": "50", "pushWindow": "16", "autoSync": "3600",
            "offline": "false",
        ]
        let wrong = try await harness.submit("/settings", fields.merging(["authStyle": "basic"]) { $1 })
        #expect(wrong.status == 422 && wrong.text.contains("authStyle must be"))
        let saved = try await harness.submit("/settings", fields.merging(["authStyle": "bearer"]) { $1 })
        #expect(saved.status == 303)
        let synced = try await harness.waitForAutoSync("synced with the bearer token") {
            $0.consecutiveFailures == 0 && $0.nextAttemptAt != nil
        }
        #expect(synced.lastError == nil)
        #expect(
            refusing.requests.contains {
                $0.headers["authorization"] == "Bearer the-token-3333" && $0.headers["x-zumo-auth"] == nil
            })
        #expect(try await harness.client.send(.get, "/settings").text.contains(#"<option value="bearer" selected>"#))
        #expect(try await harness.client.send(.get, "/api/settings").text.contains(#""authStyle":"bearer""#))
        await harness.stop()
        await refusing.stop()
    }

    @Test func offlineModePausesAutoSyncAndTheSettingTurnsItOff() async throws {
        try await withTestDashboard(configure: { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = Self.quick
        }) { harness in
            _ = try await harness.waitForAutoSync("the first sync") { $0.nextAttemptAt != nil }
            let token = try await harness.csrfToken()
            let offline = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"offline": true}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(offline.status == 200)
            let paused = try await harness.waitForAutoSync("paused") { $0.label == "auto-sync paused: offline" }
            #expect(paused.nextAttemptAt == nil)
            let page = try await harness.client.send(.get, "/")
            #expect(page.text.contains(">auto-sync paused: offline</span>"))

            let off = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"offline": false, "autoSyncInterval": 0}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(off.status == 200)
            let status = try #require(harness.dashboard.autoSync?.status)
            #expect(!status.enabled && status.nextAttemptAt == nil && status.label == "")
            let settings = try await harness.client.send(.get, "/api/settings")
            #expect(settings.text.contains(#""autoSyncInterval":0"#))
            let bad = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"autoSyncInterval": 2}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(bad.status == 422 && bad.text.contains("from 5 to 86400"))
        }
    }
}
