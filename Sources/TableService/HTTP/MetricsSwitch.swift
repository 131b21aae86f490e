import CoreMetrics
import Foundation
import Prometheus

/// Whether metrics are recorded: on unless the environment has `TODOSYNC_METRICS=off`, so that one
/// benchmark run with it and one without give the cost of recording as a ratio.
public enum MetricsSwitch {
    /// False when `TODOSYNC_METRICS` is `off` (or `0`, `false`).
    public static let isOn: Bool = {
        let value = ProcessInfo.processInfo.environment["TODOSYNC_METRICS"]?.lowercased()
        return !["off", "0", "false"].contains(value ?? "")
    }()
}

extension PrometheusMetricsFactory {
    /// A factory that records into `registry`, and its timer labelled `timer`, a histogram with
    /// `buckets` (the service's and the dashboard's each time one thing).
    public static func timing(
        _ timer: String, buckets: [Duration], in registry: PrometheusCollectorRegistry
    ) -> (factory: PrometheusMetricsFactory, timer: CoreMetrics.Timer) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[timer] = buckets
        return (factory, CoreMetrics.Timer(label: timer, factory: factory))
    }
}

extension CoreMetrics.Timer {
    /// Records `duration`, to the nanosecond.
    public func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
