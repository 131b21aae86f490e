import Foundation

/// The samples of a Prometheus text exposition (`/metrics`), for tests: `name{a="x",b="y"} 3`.
/// Label values here never hold `,` `"` or `}` (they come from fixed vocabularies and table names).
public struct PrometheusSample: Sendable, Equatable {
    public var name: String
    public var labels: [String: String]
    public var value: Double

    /// Every sample of `text`; comment lines (`# TYPE`, `# HELP`) are skipped.
    public static func parse(_ text: String) -> [PrometheusSample] {
        text.split(separator: "\n").compactMap { line -> PrometheusSample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let series = line[..<space]
            guard let open = series.firstIndex(of: "{") else {
                return PrometheusSample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",")
            {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return PrometheusSample(name: String(series[..<open]), labels: labels, value: value)
        }
    }
}

extension Array where Element == PrometheusSample {
    /// The value of the sample named `name` with exactly `labels`; nil when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        first { $0.name == name && $0.labels == labels }?.value
    }
}
