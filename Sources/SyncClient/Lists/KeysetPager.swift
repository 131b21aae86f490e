/// Keyset paging (cut by an integer key, no OFFSET, so a page costs the same anywhere in a long
/// list) over a list shown in key order, ascending or descending: the one algorithm behind the todo
/// list's pages (``ListReader``) and the queue's pages (``SyncOperationQueue/page(_:_:limit:)``).
struct KeysetPager<Element> {
    /// Where a page starts, in the order the list is shown.
    enum Position {
        /// The first page.
        case first
        /// The page after the element with this key.
        case following(Int64)
        /// The page before the element with this key.
        case preceding(Int64)
        /// The last page.
        case last
    }

    /// Whether the list is shown with its key ascending.
    let ascending: Bool
    /// Reads at most `limit` elements whose key is `bound` (`<` or `>`) `value` (both nil: any),
    /// ordered by key, ascending or not.
    let fetch: (_ bound: String?, _ value: Int64?, _ ascending: Bool, _ limit: Int) throws -> [Element]
    /// An element's key.
    let key: (Element) -> Int64

    /// At most `limit` elements at `position`, in the order shown, and whether elements come
    /// before and after them.
    func page(_ position: Position, limit: Int) throws -> (elements: [Element], hasBefore: Bool, hasAfter: Bool) {
        let after = ascending ? ">" : "<"
        let before = ascending ? "<" : ">"
        let step: Int64 = ascending ? 1 : -1
        switch position {
        case .first:
            let rows = try fetch(nil, nil, ascending, limit + 1)
            return (Array(rows.prefix(limit)), false, rows.count > limit)
        case .following(let cursor):
            let rows = try fetch(after, cursor, ascending, limit + 1)
            let page = Array(rows.prefix(limit))
            let hasBefore = try !fetch(before, page.first.map(key) ?? cursor + step, !ascending, 1).isEmpty
            return (page, hasBefore, rows.count > limit)
        case .preceding(let cursor):
            let rows = try fetch(before, cursor, !ascending, limit + 1)
            let page = Array(rows.prefix(limit).reversed())
            let hasAfter = try !fetch(after, page.last.map(key) ?? cursor - step, ascending, 1).isEmpty
            return (page, rows.count > limit, hasAfter)
        case .last:
            let rows = try fetch(nil, nil, !ascending, limit + 1)
            return (Array(rows.prefix(limit).reversed()), rows.count > limit, false)
        }
    }
}

extension Array {
    /// A page of a list read newest first, one element past `limit` (so as to know whether more
    /// follow): at most `limit` elements, and the key of the last one when more follow, where the
    /// next page starts. The journal's and the flight recorder's pages.
    func keysetPage(limit: Int, key: (Element) -> Int64) -> (elements: [Element], next: Int64?) {
        let page = Array(prefix(limit))
        return (page, count > limit ? page.last.map(key) : nil)
    }
}
