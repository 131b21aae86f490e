import Dashboard
import Foundation
import HTTPServer
import TestSupport
import Testing

/// The dashboard's Cancel button, `/api/cancel` and Offline mode stop a running sync.
struct CancelSyncTests {
    /// Runs `body` with the dashboard's remote set to one that reads each request and never
    /// answers (a sync against it runs until stopped), then stops that remote.
    private func withSilentRemote(
        _ harness: TestDashboard, _ body: (MisbehavingService) async throws -> Void
    ) async throws {
        try await withMisbehavingService(answering: { _ in .silence }) { silent in
            try await harness.dashboard.context.setRemote(url: silent.url, applicationKey: nil)
            try await body(silent)
        }
    }

    /// Waits until the sync's request has reached the silent remote.
    private func waitUntilWaiting(on remote: MisbehavingService) async {
        await remote.requestsArrived()
    }

    /// Starts a sync through `/api/sync` against a silent remote and waits until its request is
    /// there; runs `body` with the remote and the CSRF token scripts send, then stops the remote.
    private func withRunningAPISync(
        _ harness: TestDashboard, _ body: (MisbehavingService, String) async throws -> Void
    ) async throws {
        try await withSilentRemote(harness) { silent in
            let token = try await harness.csrfToken()
            #expect(
                try await harness.client.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token]).status
                    == 202
            )
            await waitUntilWaiting(on: silent)
            try await body(silent, token)
        }
    }

    @Test func cancelButtonShowsWhileASyncRunsAndStopsIt() async throws {
        let harness = try await TestDashboard()
        try await withSilentRemote(harness) { silent in
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
    }

    @Test func apiCancelNeedsTheCSRFHeaderAndStopsTheSync() async throws {
        let harness = try await TestDashboard()
        try await withRunningAPISync(harness) { silent, token in
            #expect(try await harness.client.send(.post, "/api/cancel").status == 403)
            #expect(harness.dashboard.context.jobs.current != nil)
            let answer = try await harness.client.send(
                .post, "/api/cancel", headers: [CSRFProtection.headerName: token])
            #expect(answer.status == 200)
            #expect(answer.text.contains(#""cancelled":true"#))
            await harness.dashboard.waitUntilIdle()
            #expect(harness.dashboard.context.lastSync?.stopReason == .cancelled)
            let again = try await harness.client.send(.post, "/api/cancel", headers: [CSRFProtection.headerName: token])
            #expect(again.text.contains(#""cancelled":false"#))
            await harness.stop()
        }
    }

    @Test func turningOfflineModeOnStopsARunningSync() async throws {
        let harness = try await TestDashboard()
        try await withRunningAPISync(harness) { silent, token in
            let saved = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"offline": true}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(saved.status == 200)
            await harness.dashboard.waitUntilIdle()
            #expect(harness.dashboard.context.lastSync?.stopReason == .cancelled)
            await harness.stop()
        }
    }

    @Test func stoppingTheDashboardCancelsItsSync() async throws {
        let harness = try await TestDashboard()
        try await withSilentRemote(harness) { silent throws in
            #expect(try await harness.submit("/sync", ["back": "/"]).status == 303)
            await waitUntilWaiting(on: silent)
            let started = Date()
            await harness.stop()
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }
}
