import Dashboard
import Foundation
import HTTPServer
import TestSupport
import Testing

/// The dashboard's Cancel button, `/api/cancel` and Offline mode stop a running sync.
struct CancelSyncTests {
    /// A remote that reads each request and never answers: a sync against it runs until stopped.
    private func silentRemote(_ harness: TestDashboard) async throws -> MisbehavingService {
        let silent = try await MisbehavingService { _ in .silence }
        try await harness.dashboard.context.setRemote(url: silent.url, applicationKey: nil)
        return silent
    }

    /// Waits until the sync's request has reached the silent remote.
    private func waitUntilWaiting(on remote: MisbehavingService) async {
        await remote.requestsArrived()
    }

    /// Starts a sync through `/api/sync` against a silent remote and waits until its request is
    /// there; returns the remote (stop it) and the CSRF token scripts send.
    private func runningAPISync(_ harness: TestDashboard) async throws -> (MisbehavingService, String) {
        let silent = try await silentRemote(harness)
        let token = try await harness.csrfToken()
        #expect(
            try await harness.client.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token]).status == 202
        )
        await waitUntilWaiting(on: silent)
        return (silent, token)
    }

    @Test func cancelButtonShowsWhileASyncRunsAndStopsIt() async throws {
        let harness = try await TestDashboard()
        let silent = try await silentRemote(harness)
        defer { silent.stopInBackground() }
        let idlePage = try await harness.client.send(.get, "/")
        #expect(idlePage.text.contains(#"action="/cancel" class="inline" data-cancel-form hidden"#))

        #expect(try await harness.submit("/sync", ["back": "/"]).status == 303)
        await waitUntilWaiting(on: silent)
        let runningPage = try await harness.client.send(.get, "/")
        #expect(runningPage.text.contains(#"action="/cancel" class="inline" data-cancel-form>"#))

        let cancelled = try await harness.submit("/cancel", ["back": "/"])
        #expect(cancelled.status == 303)
        #expect(cancelled.headers["location"] == "/")
        await harness.dashboard.waitUntilIdle()
        let page = try await harness.client.send(.get, "/")
        #expect(page.text.contains("Cancelled."))
        await harness.stop()
    }

    @Test func apiCancelNeedsTheCSRFHeaderAndStopsTheSync() async throws {
        let harness = try await TestDashboard()
        let (silent, token) = try await runningAPISync(harness)
        defer { silent.stopInBackground() }
        #expect(try await harness.client.send(.post, "/api/cancel").status == 403)
        #expect(await harness.dashboard.context.isSyncing)
        let answer = try await harness.client.send(.post, "/api/cancel", headers: [CSRFProtection.headerName: token])
        #expect(answer.status == 200)
        #expect(answer.text.contains(#""cancelled":true"#))
        await harness.dashboard.waitUntilIdle()
        #expect(harness.dashboard.context.lastSync?.stopReason == .cancelled)
        let again = try await harness.client.send(.post, "/api/cancel", headers: [CSRFProtection.headerName: token])
        #expect(again.text.contains(#""cancelled":false"#))
        await harness.stop()
    }

    @Test func turningOfflineModeOnStopsARunningSync() async throws {
        let harness = try await TestDashboard()
        let (silent, token) = try await runningAPISync(harness)
        defer { silent.stopInBackground() }
        let saved = try await harness.client.send(
            .post, "/api/settings", json: Data(#"{"offline": true}"#.utf8), headers: [CSRFProtection.headerName: token])
        #expect(saved.status == 200)
        await harness.dashboard.waitUntilIdle()
        #expect(harness.dashboard.context.lastSync?.stopReason == .cancelled)
        await harness.stop()
    }

    @Test func stoppingTheDashboardCancelsItsSync() async throws {
        let harness = try await TestDashboard()
        let silent = try await silentRemote(harness)
        defer { silent.stopInBackground() }
        #expect(try await harness.submit("/sync", ["back": "/"]).status == 303)
        await waitUntilWaiting(on: silent)
        let started = Date()
        await harness.stop()
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
