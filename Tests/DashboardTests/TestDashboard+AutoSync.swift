import Foundation
import Synchronization
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

/// Every start and end of a dashboard's syncs, in order: "auto" or "manual" when one starts, "ok"
/// or "failed" when it ends.
final class SyncEventLog: Sendable {
    private let events = Mutex<[String]>([])

    init(_ harness: TestDashboard) {
        harness.dashboard.sync.observe { [self] event in
            self.events.withLock { log in
                switch event {
                case .started(let automatic): log.append(automatic ? "auto" : "manual")
                case .finished(let error): log.append(error == nil ? "ok" : "failed")
                case .idle: break
                }
            }
        }
    }

    /// The events so far.
    var all: [String] { events.withLock { $0 } }
}
