/// Waits until `condition` holds, asking again every `interval`, and throws ``NeverHappened``
/// naming `what` when it does not within `seconds`.
///
/// The one poll of the suites, for what the code under test offers no event to wait on: another
/// instance's view of the database, a background pass, a file a backup writes. The deadline only
/// guards against a hang: generous, since a loaded CI machine may run many times slower.
public func eventually(
    _ what: @autoclosure () -> String, within seconds: Double = 180, every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw NeverHappened(what: what(), seconds: seconds) }
        try await Task.sleep(for: interval)
    }
}

/// The error of ``eventually(_:within:every:_:)`` when the condition never held.
public struct NeverHappened: Error, CustomStringConvertible {
    public let what: String
    public let seconds: Double
    public var description: String { "within \(seconds) s, this never happened: \(what)" }
}
