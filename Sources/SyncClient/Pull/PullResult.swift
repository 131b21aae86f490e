/// What a pull did.
public struct PullResult: Sendable, Hashable, Codable {
    /// The table pulled (nil in a result made by hand).
    public var table: String?
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

    /// An empty result of a pull of `table`.
    init(table: String) {
        self.table = table
    }

    /// "Pulled 30 rows into todoitem (28 written, 2 deleted)": the one wording of what a pull did,
    /// which ``JobOutcome/sentence`` uses too.
    public var summary: String {
        var text = Self.summary(received: received, table: table) + " (\(written) written, \(deleted) deleted"
        if skippedPending > 0 { text += ", \(skippedPending) kept for local changes" }
        return text + ")"
    }

    /// "Pulled 30 rows into todoitem": the wording of a pull's rows, for a result and for the last
    /// sync's ``SyncSummary/message`` alike.
    static func summary(received: Int, table: String?) -> String {
        "Pulled \(received) row\(received == 1 ? "" : "s")" + (table.map { " into \($0)" } ?? "")
    }
}
