/// Where a page of a list starts: lists run from the newest stored row to the oldest, and a page
/// is cut by the key of a row it borders, so it stays put while rows come and go elsewhere.
public enum ListPosition: Sendable, Hashable {
    /// The newest rows.
    case first
    /// The rows stored before the row with this key (the next page).
    case olderThan(Int64)
    /// The rows stored after the row with this key (the previous page).
    case newerThan(Int64)
    /// The oldest rows.
    case last
}

/// Which rows of a table a list shows, and which page of them.
public struct ListRequest: Sendable, Hashable {
    /// Only rows whose boolean `column` is `value` (a missing value counts as false).
    public struct Flag: Sendable, Hashable {
        public var column: String
        public var value: Bool

        public init(_ column: String, _ value: Bool) {
            self.column = column
            self.value = value
        }
    }

    public var flag: Flag?
    /// Only rows whose text columns contain this, ignoring case; empty for all.
    public var search: String
    public var position: ListPosition
    /// Rows per page.
    public var limit: Int

    public init(flag: Flag? = nil, search: String = "", position: ListPosition = .first, limit: Int = 50) {
        self.flag = flag
        self.search = search
        self.position = position
        self.limit = max(1, limit)
    }
}
