import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Dashboard

extension TestDashboard {
    /// Waits (polling, with a deadline) until `condition` holds for the dashboard's auto-sync
    /// status, and returns that status; records an issue naming `what` and throws when it never does.
    func waitForAutoSync(
        _ what: String, seconds: Double = 180, log: SyncEventLog? = nil, _ condition: (AutoSyncStatus) throws -> Bool
    ) async throws -> AutoSyncStatus {
        var reached: AutoSyncStatus?
        do {
            try await eventually(what, within: seconds) {
                guard let status = dashboard.autoSync?.status, try condition(status) else { return false }
                reached = status
                return true
            }
        } catch let error as NeverHappened {
            Issue.record(
                "\(error); auto-sync is \(String(describing: dashboard.autoSync?.status)); syncs: \(log?.timed ?? "not logged")"
            )
            throw error
        }
        return reached!
    }
}

/// Every start and end of a dashboard's syncs, in order, from the first start it hears of (a sync
/// that began before it listened is not its): "auto" or "manual" when one starts, "ok" or "failed"
/// when it ends.
final class SyncEventLog: Sendable {
    private let events = Mutex<[(event: String, at: ContinuousClock.Instant)]>([])

    init(_ harness: TestDashboard) {
        harness.dashboard.context.jobs.observe { [self] event in
            let now = ContinuousClock.now
            self.events.withLock { log in
                switch event {
                case .started(let start) where start.job.isSync: log.append((start.automatic ? "auto" : "manual", now))
                case .finished(let end) where end.job.isSync && !log.isEmpty:
                    log.append((end.error == nil ? "ok" : "failed", now))
                case .started, .finished, .released: break
                }
            }
        }
    }

    /// The events so far.
    var all: [String] { events.withLock { $0.map(\.event) } }

    /// The events so far with the seconds since the first: for a failure's message.
    var timed: String {
        events.withLock { log in
            guard let first = log.first?.at else { return "none" }
            return log.map { "\($0.event) +\(($0.at - first).formatted(.units(allowed: [.milliseconds])))" }
                .joined(separator: ", ")
        }
    }
}
