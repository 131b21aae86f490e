import GRDB

/// A test's own connection to a SQLite file that a store or service of this test may be writing at
/// that moment (a background flush, a request in flight): it waits up to 30 s for their lock, as
/// they wait for each other's, instead of failing at once with "database is locked".
public func sideConnection(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.busyMode = .timeout(30)
    return try DatabaseQueue(path: path, configuration: configuration)
}
