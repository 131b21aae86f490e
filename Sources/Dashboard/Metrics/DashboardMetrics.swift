import CoreMetrics
import Foundation
import Prometheus
import SyncClient
import Synchronization
import TableService

/// What the dashboard counts for Prometheus (`GET /metrics`): its syncs, what they pushed and
/// pulled, and — read from the store at each scrape — the queue.
///
/// Recording goes through swift-metrics into this dashboard's own registry (not the process-wide
/// `MetricsSystem`, so that several dashboards in one process, as in the demo and the tests, keep
/// their own figures). Label values come from fixed vocabularies or table names, never from ids or
/// text.
public final class DashboardMetrics: Sendable {
    /// How a sync, push or pull ended (the `outcome` label of `todosync_syncs_total`).
    public enum SyncOutcome: String, Sendable, CaseIterable {
        case success, failure, cancelled, offline
    }

    /// The registry `/metrics` prints.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let syncDuration: CoreMetrics.Timer
    /// Made at the first success: before it, the gauge is absent rather than 1970.
    private let lastSuccess = Mutex<CoreMetrics.Gauge?>(nil)
    private let nextAttemptGauge = Mutex<CoreMetrics.Gauge?>(nil)
    private let knownTables = Mutex<Set<String>>([])
    /// Whether anything is recorded (`TODOSYNC_METRICS=off` turns it off, to measure its cost).
    public let isRecording: Bool

    /// Buckets of `todosync_sync_duration_seconds`: syncs take from milliseconds to minutes.
    static let syncBuckets: [Duration] = [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(120), .seconds(300),
    ]

    /// A registry of its own; `isRecording` defaults to ``MetricsSwitch/isOn``.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), isRecording: Bool? = nil) {
        self.registry = registry
        (factory, syncDuration) = PrometheusMetricsFactory.timing(
            "todosync_sync_duration_seconds", buckets: Self.syncBuckets, in: registry)
        self.isRecording = isRecording ?? MetricsSwitch.isOn
        CoreMetrics.Gauge(label: "todosync_held_operations", factory: factory).record(0)
    }

    /// When auto-sync will try next; nil (the default) leaves `todosync_next_attempt_timestamp_seconds`
    /// out of `/metrics`. Auto-sync sets it.
    public var nextAttempt: Date? {
        get { nextAttemptValue.withLock { $0 } }
        set {
            nextAttemptValue.withLock { $0 = newValue }
            nextAttemptGauge.withLock { gauge in
                guard let newValue else {
                    gauge?.destroy()
                    gauge = nil
                    return
                }
                if gauge == nil {
                    gauge = CoreMetrics.Gauge(label: "todosync_next_attempt_timestamp_seconds", factory: factory)
                }
                gauge?.record(newValue.timeIntervalSince1970)
            }
        }
    }
    private let nextAttemptValue = Mutex<Date?>(nil)

    /// Counts a finished sync, push or pull and its duration; a success also moves
    /// `todosync_last_success_timestamp_seconds`.
    func recordSync(kind: BackgroundSync.Kind, outcome: SyncOutcome, duration: Duration, at now: Date = Date()) {
        guard isRecording else { return }
        CoreMetrics.Counter(
            label: "todosync_syncs_total", dimensions: [("kind", kind.rawValue), ("outcome", outcome.rawValue)],
            factory: factory
        ).increment()
        syncDuration.record(duration)
        if outcome == .success { setLastSuccess(now) }
    }

    /// Counts a push's operations by how they ended.
    func recordPush(_ result: PushResult) {
        guard isRecording else { return }
        for (outcome, count) in [
            ("pushed", result.pushed.count), ("conflict", result.conflicts.count), ("failed", result.failed.count),
            ("resolved", result.resolved.count),
        ] where count > 0 {
            CoreMetrics.Counter(
                label: "todosync_pushed_operations_total", dimensions: [("outcome", outcome)], factory: factory
            )
            .increment(by: count)
        }
    }

    /// Counts the rows a pull of `table` received.
    func recordPull(table: String, rows: Int) {
        guard isRecording, rows > 0 else { return }
        CoreMetrics.Counter(label: "todosync_pulled_rows_total", dimensions: [("table", table)], factory: factory)
            .increment(by: rows)
    }

    /// Sets `todosync_last_success_timestamp_seconds` from the store's last result when it succeeded
    /// (so that a restart does not forget it).
    func seedLastSuccess(_ last: SyncSummary?) {
        guard let last, last.error == nil, last.stopReason == nil else { return }
        setLastSuccess(last.finishedAt)
    }

    private func setLastSuccess(_ date: Date) {
        lastSuccess.withLock { gauge in
            if gauge == nil {
                gauge = CoreMetrics.Gauge(label: "todosync_last_success_timestamp_seconds", factory: factory)
            }
            gauge?.record(date.timeIntervalSince1970)
        }
    }

    /// Sets the queue gauges from `counts`: every synced table and every table seen before reads 0
    /// when it has no operations.
    func updateQueue(_ counts: [String: TableQueueCounts], syncedTables: [String]) {
        let tables = knownTables.withLock { known in
            known.formUnion(counts.keys)
            known.formUnion(syncedTables)
            return known
        }
        for table in tables {
            let count = counts[table] ?? TableQueueCounts()
            CoreMetrics.Gauge(label: "todosync_pending_operations", dimensions: [("table", table)], factory: factory)
                .record(count.waiting)
            CoreMetrics.Gauge(label: "todosync_conflicts", dimensions: [("table", table)], factory: factory)
                .record(count.conflicts)
        }
        // Held operations are counted as held only (not as pending), across every table.
        CoreMetrics.Gauge(label: "todosync_held_operations", factory: factory)
            .record(counts.values.reduce(0) { $0 + $1.held })
    }

    /// The registry in the Prometheus text format.
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}

extension DashboardMetrics.SyncOutcome {
    /// The outcome of a sync that ended with `error`.
    init(_ error: SyncError) {
        switch error {
        case .stopped(.cancelled): self = .cancelled
        case .stopped(.offline): self = .offline
        default: self = .failure
        }
    }
}
