import Foundation
import TestSupport
import Testing

@testable import Dashboard

extension TestDashboard {
    /// Waits (polling, with a deadline) until `condition` holds for the dashboard's auto-sync
    /// status, and returns that status; records an issue naming `what` and throws when it never does.
    func waitForAutoSync(
        _ what: String, seconds: Double = 30, _ condition: (AutoSyncStatus) throws -> Bool
    ) async throws -> AutoSyncStatus {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let status = dashboard.autoSync?.status, try condition(status) { return status }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("auto-sync never reached: \(what); it is \(String(describing: dashboard.autoSync?.status))")
        throw CancellationError()
    }
}
