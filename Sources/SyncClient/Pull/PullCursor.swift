/// Where an incremental pull stands, and what the next page must satisfy: the pull's state machine.
///
/// Each page is checked against the cursor it was asked with before it is written: a service that
/// ignores the filter, sends the same page again and again, goes back in `updatedAt` or invents rows
/// is named in a ``ServiceFault`` within a few pages, so every pull ends.
///
/// | page | outcome |
/// |---|---|
/// | empty | the pull is complete |
/// | the same ids as the previous page (`$skip` mode) | ``ServiceFault/repeatedPages(table:)`` |
/// | a row with `updatedAt` before the cursor | ``ServiceFault/ignoredFilter(table:rowId:)`` |
/// | `updatedAt` decreasing within the page | ``ServiceFault/updatedAtWentBackwards(table:from:to:)`` |
/// | a row at the cursor's instant, up to its id, that this pull never saw (keyset mode) | ``ServiceFault/ignoredFilter(table:rowId:)`` |
/// | rows past the cursor | the cursor moves to the last of them |
/// | no row past the cursor | `$skip` mode at the cursor's instant (for services that ignore the keyset) |
struct PullCursor: Sendable {
    /// The `(id, updatedAt)` of one pulled row.
    struct RowKey: Sendable, Hashable {
        var id: String?
        var updatedAt: String?
    }

    /// The table pulled (named in faults).
    let table: String
    /// What the next page asks for.
    private(set) var token: DeltaToken
    /// The ids of the previous page (`$skip` mode only).
    private var previousIds: [String]?
    /// Ids seen at the cursor's instant since this pull reached it; nil when the pull started at that
    /// instant (a resumed pull), where rows seen by earlier pulls cannot be told from invented ones.
    private var seenAtCursor: Set<String>?

    /// A cursor starting at `token` (a saved delta token, or the start).
    init(table: String, token: DeltaToken) {
        self.table = table
        self.token = token
        seenAtCursor = token.updatedAt == nil ? [] : nil
    }

    /// Checks a page against the cursor it was asked with and moves past it.
    ///
    /// - Returns: false when the page was empty (the pull is complete).
    mutating func advance(over rows: [RowKey]) throws(ServiceFault) -> Bool {
        guard !rows.isEmpty else { return false }
        let ids = rows.compactMap(\.id)
        if token.skip != nil, ids == previousIds { throw .repeatedPages(table: table) }
        try check(rows)
        let next = Self.advance(token, over: rows)
        if next.updatedAt != token.updatedAt {
            seenAtCursor = []
        }
        if let instant = next.updatedAt {
            for row in rows where row.updatedAt.map({ DeltaToken.compare($0, instant) == .orderedSame }) == true {
                if let id = row.id { seenAtCursor?.insert(id) }
            }
        }
        // Switching to the $skip fallback asks for rows already seen: not a repeat.
        previousIds = (token.skip == nil) != (next.skip == nil) ? nil : ids
        token = next
        return true
    }

    /// Every row at or after the cursor's instant, in `updatedAt` order, and none invented at the
    /// cursor's instant.
    private func check(_ rows: [RowKey]) throws(ServiceFault) {
        var previous: String?
        for row in rows {
            guard let updatedAt = row.updatedAt else { continue }
            if let instant = token.updatedAt {
                switch DeltaToken.compare(updatedAt, instant) {
                case .orderedAscending:
                    throw .ignoredFilter(table: table, rowId: row.id ?? "")
                case .orderedSame:
                    // Asked for rows after (instant, id): a service that ignores the keyset sends the
                    // rows at this instant again, but they must be rows this pull has seen.
                    if let seen = seenAtCursor, let id = row.id, let cursorId = token.id, id <= cursorId,
                        !seen.contains(id)
                    {
                        throw .ignoredFilter(table: table, rowId: id)
                    }
                case .orderedDescending:
                    break
                }
            }
            if let previous, DeltaToken.compare(previous, updatedAt) == .orderedDescending {
                throw .updatedAtWentBackwards(table: table, from: previous, to: updatedAt)
            }
            previous = updatedAt
        }
    }

    /// The cursor after a page: the last row by `(updatedAt, id)`, or the `$skip` fallback when the
    /// page brought nothing past the cursor.
    static func advance(_ token: DeltaToken, over rows: [RowKey]) -> DeltaToken {
        if token.skip == nil {
            var next = token
            for row in rows {
                guard let updatedAt = row.updatedAt, let id = row.id else { continue }
                if next.isBefore(updatedAt: updatedAt, id: id) {
                    next.updatedAt = updatedAt
                    next.id = id
                }
            }
            if next != token { return next }
            // No progress: this server does not honour the keyset filter. Page with $skip instead.
            return DeltaToken(updatedAt: token.updatedAt, id: nil, skip: 0)
        }
        var latest = token.updatedAt
        for row in rows {
            guard let updatedAt = row.updatedAt else { continue }
            if latest == nil || DeltaToken.compare(latest!, updatedAt) == .orderedAscending { latest = updatedAt }
        }
        guard let latest else { return DeltaToken(updatedAt: nil, id: nil, skip: (token.skip ?? 0) + rows.count) }
        if let current = token.updatedAt, DeltaToken.compare(current, latest) == .orderedSame {
            return DeltaToken(updatedAt: current, id: nil, skip: (token.skip ?? 0) + rows.count)
        }
        let atLatest = rows.filter { $0.updatedAt.map { DeltaToken.compare($0, latest) == .orderedSame } ?? false }
        return DeltaToken(updatedAt: latest, id: nil, skip: atLatest.count)
    }
}
