import FaultProxy
import Foundation
import SyncClient
import Synchronization
import TestSupport
import Testing

@testable import Dashboard

/// Auto-sync against a service that answers 500: an answer, not silence, so only the backoff
/// decides when it tries again (no reachability probes), and the queue drains at the first attempt
/// after the service answers 200 again.
@Suite(.timeLimit(.minutes(10))) struct AutoSyncServerErrorTests {
    /// Backoff ceilings of 0.3, 0.6, 1.2 s... each waited in full, on a clock the test moves; a probe
    /// every 50 ms, were there any, would sync long before the backoff's end.
    static let timing = AutoSyncSchedule.Timing(
        backoffBase: 0.3, backoffCap: 5, debounce: 0.05, probeEvery: 0.05, fixedJitter: 1)

    /// A failed sync's end as auto-sync planned after it.
    struct Failure: Sendable {
        var consecutiveFailures: Int
        /// From the sync's end to the next attempt.
        var wait: TimeInterval
    }

    @Test func errorAnswersBackOffWithoutProbesAndTheNextAttemptDrainsTheQueueOnceTheServiceIsFine() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder)
        // The proxy answers 500 itself while the plan says so: the service misbehaves, then recovers.
        let proxy = try await service.proxy()
        let clock = ManualWallClock()
        let harness = try await TestDashboard(remote: .url(proxy.endpoint, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.autoSyncTiming = Self.timing
            configuration.clock = clock
        }
        let autoSync = try #require(harness.dashboard.autoSync)
        let failures = Mutex<[Failure]>([])
        let starts = Mutex<[Date]>([])
        // Told after auto-sync's own observer (registered first), so the status holds its plan.
        harness.dashboard.context.jobs.observe { [weak autoSync] event in
            switch event {
            case .started(let start) where start.job.isSync: starts.withLock { $0.append(clock.now) }
            case .finished(let end) where end.job.isSync:
                guard end.error != nil, let status = autoSync?.status, let next = status.nextAttemptAt else { return }
                let failure = Failure(
                    consecutiveFailures: status.consecutiveFailures, wait: next.timeIntervalSince(clock.now))
                failures.withLock { $0.append(failure) }
            case .started, .finished, .released: break
            }
        }
        let context = harness.dashboard.context
        _ = try await harness.waitForAutoSync("the first sync") {
            $0.nextAttemptAt != nil && $0.consecutiveFailures == 0
        }

        proxy.setPlan(.always(.status(500)))
        try await context.table("todoitem").insert(["id": "during-errors", "text": "made while the service fails"])
        let waiting = try await harness.waitForAutoSync("three failed syncs, waiting for the next") { status in
            if status.consecutiveFailures >= 3, status.nextAttemptAt != nil { return true }
            // Time moves only to the attempt planned.
            if let next = status.nextAttemptAt { clock.advance(to: next) }
            return false
        }
        #expect(waiting.lastError?.contains("500") == true, "\(String(describing: waiting.lastError))")
        #expect(waiting.label.hasPrefix("next try in "))
        let failed = failures.withLock { $0 }
        #expect(failed.prefix(3).map(\.consecutiveFailures) == [1, 2, 3])
        let waits = failed.prefix(3).map(\.wait)
        #expect(waits.map { ($0 * 1000).rounded() } == [300, 600, 1200], "the backoff's ceilings, waited whole")

        let due = try #require(waiting.nextAttemptAt)
        let heard = starts.withLock { $0.count }
        proxy.setPlan(.passThrough)
        _ = try await harness.waitForAutoSync("the queue drained") { status in
            // Time passes 50 ms at a time: a probe, were there any, would sync before the backoff's end.
            clock.advance(by: 0.05)
            return try status.consecutiveFailures == 0 && context.status().pending == 0
        }
        #expect(try await service.rest.get("todoitem", "during-errors")?["text"] == "made while the service fails")
        let later = starts.withLock { Array($0.dropFirst(heard)) }
        #expect(later.allSatisfy { $0 >= due }, "no sync before the backoff's end (due \(due), started \(later))")
        let asked = try context.exchanges().exchanges.filter { $0.purpose == .reachability(table: "todoitem") }
        #expect(asked.isEmpty, "an error answer is an answer: no probes")
        #expect(!proxy.requests.contains { $0.contains("top=0") }, "\(proxy.requests)")
        await harness.stop()
        await proxy.stop()
        await service.stop()
    }
}
