/// What a pull did.
public struct PullResult: Sendable, Hashable, Codable {
    /// Rows the server sent.
    public var received = 0
    /// Rows written into the local table.
    public var written = 0
    /// Local rows removed because the server deleted them.
    public var deleted = 0
    /// Rows left alone because they have a queued local change.
    public var skippedPending = 0
    /// Requests made.
    public var pages = 0
    /// Operations pushed first (the table had pending changes).
    public var pushed: PushResult?

    /// An empty result.
    public init() {}
}
