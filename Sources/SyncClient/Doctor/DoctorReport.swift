/// What a doctor run found: a verdict per check, in order, and why it stopped early if it did.
public struct DoctorReport: Sendable, Hashable, Codable {
    /// The endpoint probed.
    public var url: String
    /// The table probed.
    public var table: String
    /// The protocol the checks spoke (nil when the endpoint speaks neither).
    public var dialect: TableProtocol?
    /// Whether only GETs were sent.
    public var readOnly: Bool
    /// One result per check run, in order.
    public var results: [DoctorResult]
    /// Why the run ended before its last check: the service unreachable, a deadline, a cancel.
    public var stop: DoctorStop?
    /// ``stop`` in words.
    public var stopped: String?
    /// Whether the run was cancelled.
    public var cancelled: Bool
    /// Probe rows the clean-up could not delete (the service stopped answering).
    public var leftBehind: [String]

    /// Records why the run ended early.
    mutating func stop(_ reason: DoctorStop) {
        stop = reason
        stopped = reason.description
        cancelled = reason == .cancelled
    }

    /// The red checks.
    public var failures: [DoctorResult] { results.filter { $0.verdict.outcome == .failed } }

    /// Whether every check ran and none is red.
    public var isHealthy: Bool { stopped == nil && failures.isEmpty }

    /// "7 checks: 6 green, 1 red" and the reason it stopped, if it did.
    public var summary: String {
        let passed = results.filter { $0.verdict.outcome == .passed }.count
        let skipped = results.filter { $0.verdict.outcome == .skipped }.count
        var text = "\(results.count) check\(results.count == 1 ? "" : "s") of \(url) (table \(table)"
        text += dialect.map { ", \($0.label)" } ?? ""
        text += readOnly ? ", read-only" : ""
        text += "): \(passed) green, \(failures.count) red"
        if skipped > 0 { text += ", \(skipped) not run" }
        if let stopped { text += ". Stopped: \(stopped)" }
        if !leftBehind.isEmpty {
            text += ". \(leftBehind.count) probe row(s) could not be deleted: " + leftBehind.joined(separator: ", ")
        }
        return text
    }
}
