import SyncProtocol

/// One page of a list, read in one read transaction with the latest queued change of each row.
public struct ListPage: Sendable {
    /// The rows, newest first.
    public var items: [Item]
    /// Each row's key, for the cursors of the neighbouring pages.
    public var keys: [Int64]
    /// The latest queued change of the rows that have one, by id.
    public var operations: [String: OperationSummary]
    /// Whether newer rows exist before this page, and older ones after it.
    public var hasNewer: Bool
    public var hasOlder: Bool
    /// How many rows match in all; kept up to date by the store, so known without counting,
    /// except for a search (nil).
    public var total: Int?
}
