/// Runs `body` with a time limit; a test that spawns work must never hang the suite. The limit
/// guards against a hang only: generous, since a loaded CI machine may run these many times slower.
public func withTimeLimit<T: Sendable>(
    _ seconds: Double, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimeLimitExceeded(seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

/// The error of ``withTimeLimit(_:_:)`` when the body took longer.
public struct TimeLimitExceeded: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "the test did not finish within \(seconds) s" }
}
