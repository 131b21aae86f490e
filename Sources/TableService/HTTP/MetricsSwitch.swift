import Foundation

/// Whether metrics are recorded: on unless the environment has `TODOSYNC_METRICS=off`, so that one
/// benchmark run with it and one without give the cost of recording as a ratio.
public enum MetricsSwitch {
    /// False when `TODOSYNC_METRICS` is `off` (or `0`, `false`).
    public static let isOn: Bool = {
        let value = ProcessInfo.processInfo.environment["TODOSYNC_METRICS"]?.lowercased()
        return !["off", "0", "false"].contains(value ?? "")
    }()
}
