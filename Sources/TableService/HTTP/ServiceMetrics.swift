import CoreMetrics
import Foundation
import HTTPServer
import HTTPTypes
import Prometheus
import Synchronization

/// What `todosync serve` counts for Prometheus (`GET /metrics`): each `/tables` request by table,
/// method and status, its duration, and — read at each scrape — each table's rows and the disk
/// syncs that made writes durable (`todosync_disk_syncs_total`, SQLite: fewer than the writes when
/// concurrent writes shared a sync).
///
/// Recording goes through swift-metrics into the service's own registry (not the process-wide
/// `MetricsSystem`, so that several services in one process keep their own figures). Labels come
/// from fixed vocabularies: a table the service does not hold is counted as `other`, so that
/// requests for made-up names cannot grow the label set; ids and bodies are never labels.
public final class ServiceMetrics: Sendable {
    /// One series of `todosync_http_requests_total`.
    struct Series: Hashable, Sendable {
        let table: String
        let method: String
        let status: Int
    }

    /// The registry `/metrics` prints.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let duration: CoreMetrics.Timer
    /// The counters made so far: asking the registry for one at every request costs more than this lookup.
    private let counters = Mutex<[Series: CoreMetrics.Counter]>([:])
    private let knownTables = Mutex<Set<String>>([])
    private let diskSyncs: StoreTotal
    private let databaseReads: StoreTotal
    /// Whether requests are counted (`TODOSYNC_METRICS=off` turns it off, to measure its cost).
    public let isRecording: Bool

    /// Buckets of `todosync_http_request_duration_seconds`, from a cached read to a slow page.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10),
    ]
    /// The most tables counted by name; requests for others count as `other`.
    static let tableLimit = 200
    /// The methods counted by name; others count as `other`.
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// A registry of its own; `isRecording` defaults to ``MetricsSwitch/isOn``.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), isRecording: Bool? = nil) {
        self.registry = registry
        (factory, duration) = PrometheusMetricsFactory.timing(
            "todosync_http_request_duration_seconds", buckets: Self.durationBuckets, in: registry)
        self.isRecording = isRecording ?? MetricsSwitch.isOn
        diskSyncs = StoreTotal(CoreMetrics.Counter(label: "todosync_disk_syncs_total", factory: factory))
        databaseReads = StoreTotal(CoreMetrics.Counter(label: "todosync_database_reads_total", factory: factory))
    }

    /// Counts one answered `/tables` request; `knows` tells whether the service holds a table.
    func record(
        _ request: Request, status: HTTPResponse.Status, knows: (String) -> Bool, now: ContinuousClock.Instant = .now
    ) {
        guard isRecording, request.pathSegments.first == "tables" else { return }
        let name = request.pathSegments.count > 1 ? request.pathSegments[1] : ""
        let table = knownTables.withLock { known -> String in
            if known.contains(name) { return name }
            guard known.count < Self.tableLimit, knows(name) else { return "other" }
            known.insert(name)
            return name
        }
        let method = request.method.rawValue
        let series = Series(
            table: table, method: Self.methods.contains(method) ? method : "other", status: status.code)
        let counter = counters.withLock { counters in
            if let counter = counters[series] { return counter }
            let counter = CoreMetrics.Counter(
                label: "todosync_http_requests_total",
                dimensions: [("table", series.table), ("method", series.method), ("status", String(series.status))],
                factory: factory)
            counters[series] = counter
            return counter
        }
        counter.increment()
        duration.record(now - request.receivedAt)
    }

    /// Sets `todosync_rows{table}` to each table's live rows.
    func updateRows(_ rows: [String: Int]) {
        for (table, count) in rows {
            CoreMetrics.Gauge(label: "todosync_rows", dimensions: [("table", table)], factory: factory).record(count)
        }
    }

    /// Brings `todosync_disk_syncs_total` to `total`, the store's count since it opened.
    func updateDiskSyncs(_ total: Int) { diskSyncs.bring(to: total) }

    /// Brings `todosync_database_reads_total` (read transactions) to `total`, the store's count.
    func updateDatabaseReads(_ total: Int) { databaseReads.bring(to: total) }

    /// Sets `todosync_installations` (devices seen) and `todosync_installations_writing_old_shape`
    /// (those still sending a renamed or retired column's old name).
    private func updateInstallations(total: Int, writingOldShape: Int) {
        CoreMetrics.Gauge(label: "todosync_installations", factory: factory).record(total)
        CoreMetrics.Gauge(label: "todosync_installations_writing_old_shape", factory: factory).record(writingOldShape)
    }

    /// Sets `todosync_devices{state}` to the devices in each state (never an id), and keeps
    /// `todosync_installations` (devices seen) and `todosync_installations_writing_old_shape`.
    func updateDevices(_ counts: [String: Int], writingOldShape: Int) {
        for (state, count) in counts {
            CoreMetrics.Gauge(label: "todosync_devices", dimensions: [("state", state)], factory: factory).record(count)
        }
        updateInstallations(total: counts.values.reduce(0, +), writingOldShape: writingOldShape)
    }

    /// `todosync_fleet_saves_total`: the transactions that saved the devices seen.
    func countFleetSave() {
        CoreMetrics.Counter(label: "todosync_fleet_saves_total", factory: factory).increment()
    }

    /// `todosync_change_subscribers`: the change channel's subscriptions open now.
    func updateSubscribers(_ count: Int) {
        CoreMetrics.Gauge(label: "todosync_change_subscribers", factory: factory).record(count)
    }

    /// The registry in the Prometheus text format.
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}

/// Counts every request the service answers into ``ServiceMetrics`` (after its handler, errors included).
struct RequestMetrics: Middleware {
    let metrics: ServiceMetrics
    let store: any TableStorage

    func finish(_ request: Request, _ response: inout Response) {
        metrics.record(request, status: response.status) { store.schema(of: $0) != nil }
    }
}

/// A counter that follows a total the store keeps (it counts since it opened; the counter only adds).
private final class StoreTotal: Sendable {
    let counter: CoreMetrics.Counter
    let counted = Mutex(0)

    init(_ counter: CoreMetrics.Counter) { self.counter = counter }

    func bring(to total: Int) {
        let new = counted.withLock { counted in
            defer { counted = max(counted, total) }
            return max(0, total - counted)
        }
        if new > 0 { counter.increment(by: new) }
    }
}
