import Synchronization

/// Where the pages of a list request ended, so that the next page (`$skip` advanced, as the `Link`
/// header does) starts right after the last row sent instead of making PostgreSQL step over every
/// skipped row again: a full read in pages costs O(n) instead of O(n²).
///
/// Only lists in `updatedAt, id` or `createdAt, id` order qualify. Those are positional reads, so
/// an insert always lands after every row such a page has answered (see `IncrementalPull.md`),
/// and the rows before a remembered row keep their positions until a row among them is changed,
/// deleted or brought back. Those writes count themselves in `__rewrites` (by the statement that
/// writes them), and a remembered row is used
/// only while that count is the one read *before* the page that ended at it: the page that starts
/// after it is then exactly the page `$skip` names. The count is checked by the page's own
/// statement (one snapshot); a stale cursor yields no rows, and the page is read by `$skip`.
///
/// Each instance keeps its own cursors; the count is the database's, so writes through any
/// instance invalidate them.
final class PageCursors: Sendable {
    /// The most lists (and, per list, positions) remembered; past it they are all forgotten (a
    /// cursor is only a shortcut).
    static let capacity = 1024

    /// A list request without its `$top` and `$skip`.
    struct Key: Hashable, Sendable {
        let sql: String
        let arguments: [SQLValue]
    }

    /// The row at a position: its key in the order, and the table's rewrites when it was there.
    struct Cursor: Sendable, Equatable {
        let stamp: Int64
        let id: String
        let rewrites: Int64
    }

    private let lists = Mutex<[Key: [Int: Cursor]]>([:])

    /// The known row nearest before `position` in the results of `query`, and the position just
    /// after it (the page skips what lies between). Another instance may have served the pages
    /// in between: behind a load balancer, each instance still skips at most a page or so.
    func cursor(before position: Int, in query: CompiledQuery) -> (cursor: Cursor, position: Int)? {
        let key = Key(sql: query.selectSQL, arguments: query.countArguments)
        return lists.withLock { lists in
            guard let cursors = lists[key] else { return nil }
            if let cursor = cursors[position] { return (cursor, position) }
            guard let nearest = cursors.keys.filter({ $0 < position }).max() else { return nil }
            return (cursors[nearest]!, nearest)
        }
    }

    /// Remembers the row just before `position` in the results of `query`.
    func remember(_ cursor: Cursor, before position: Int, in query: CompiledQuery) {
        let key = Key(sql: query.selectSQL, arguments: query.countArguments)
        lists.withLock { lists in
            if lists[key] == nil, lists.count >= Self.capacity { lists.removeAll(keepingCapacity: true) }
            if lists[key, default: [:]].count >= Self.capacity { lists[key] = [:] }
            lists[key, default: [:]][position] = cursor
        }
    }
}
