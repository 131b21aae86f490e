import Synchronization

/// Where the pages of a list request ended, so that the next page (`$skip` advanced, as the `Link`
/// header does) starts right after the last row sent instead of making PostgreSQL step over every
/// skipped row again: a full read in pages costs O(n) instead of O(n²).
///
/// Only lists in `updatedAt, id` or `createdAt, id` order qualify. In those orders an insert always
/// lands after every row a reader has seen (its stamp is greater than any committed one; see
/// `IncrementalPull.md`), so the rows before a remembered row keep their positions until a row
/// among them is changed, deleted or brought back. Those writes count themselves in the table's
/// `rewrites` (in `__tables`, by the statement that takes the stamp), and a remembered row is used
/// only while that count is the one read *before* the page that ended at it: the page that starts
/// after it is then exactly the page `$skip` names. The count is checked by the page's own
/// statement (one snapshot); a stale cursor yields no rows, and the page is read by `$skip`.
///
/// Each instance keeps its own cursors; the count is the database's, so writes through any
/// instance invalidate them.
final class PageCursors: Sendable {
    /// The most cursors kept; past it they are all forgotten (a cursor is only a shortcut).
    static let capacity = 4096

    /// A list request without its `$top` and `$skip`, and the position of a row in its results.
    struct Key: Hashable, Sendable {
        let sql: String
        let arguments: [SQLValue]
        let position: Int
    }

    /// The row at a position: its key in the order, and the table's rewrites when it was there.
    struct Cursor: Sendable, Equatable {
        let stamp: Int64
        let id: String
        let rewrites: Int64
    }

    private let cursors = Mutex<[Key: Cursor]>([:])

    /// The row just before `position` in the results of `query`, if known.
    func cursor(before position: Int, in query: CompiledQuery) -> Cursor? {
        let key = Key(sql: query.selectSQL, arguments: query.countArguments, position: position)
        return cursors.withLock { $0[key] }
    }

    /// Remembers the row just before `position` in the results of `query`.
    func remember(_ cursor: Cursor, before position: Int, in query: CompiledQuery) {
        let key = Key(sql: query.selectSQL, arguments: query.countArguments, position: position)
        cursors.withLock { cursors in
            if cursors.count >= Self.capacity { cursors.removeAll(keepingCapacity: true) }
            cursors[key] = cursor
        }
    }
}
