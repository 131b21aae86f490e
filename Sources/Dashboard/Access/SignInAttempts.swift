import Foundation

/// How many failed sign-ins each client address may make: at most ``limit`` in a ``window``, then
/// it waits for the window's end. A pure value: ``SignInSessions`` keeps it under its lock.
struct SignInAttempts: Sendable {
    var limit = 5
    var window: TimeInterval = 60
    /// Addresses remembered at most (the oldest window is forgotten first).
    var capacity = 10_000
    private var failures: [String: (since: Date, count: Int)] = [:]

    /// Seconds until `address` may try again; nil when it may now.
    func wait(for address: String, now: Date) -> TimeInterval? {
        guard let entry = failures[address], now.timeIntervalSince(entry.since) < window, entry.count >= limit
        else { return nil }
        return window - now.timeIntervalSince(entry.since)
    }

    mutating func failed(_ address: String, now: Date) {
        if let entry = failures[address], now.timeIntervalSince(entry.since) < window {
            failures[address] = (entry.since, entry.count + 1)
            return
        }
        if failures.count >= capacity {
            failures = failures.filter { now.timeIntervalSince($0.value.since) < window }
            if failures.count >= capacity, let oldest = failures.min(by: { $0.value.since < $1.value.since }) {
                failures[oldest.key] = nil
            }
        }
        failures[address] = (now, 1)
    }
}
