/// Where a device's incremental pull of a table asks from: the lower bound its `$filter` puts on
/// `updatedAt` (with the id of a keyset cursor), then its `$skip` (an official client pages one
/// query by `$skip`, so a larger skip at the same bound is progress), or a `$changes` cursor. It is
/// what the device asks from, not what it was sent: a device that asks again and again from the
/// same position is not applying what it gets.
struct PullPosition: Sendable, Hashable, Comparable, Codable {
    /// Milliseconds since 1970.
    var updatedAt: Int64
    /// The keyset cursor's id (`updatedAt eq T and id gt 'I'`), empty without one.
    var id: String
    var skip: Int

    static func < (lhs: PullPosition, rhs: PullPosition) -> Bool {
        (lhs.updatedAt, lhs.id, lhs.skip) < (rhs.updatedAt, rhs.id, rhs.skip)
    }

    /// The position of a list request; nil when its filter puts no lower bound on `updatedAt` (a
    /// read, not an incremental pull).
    init?(filter: FilterExpression?, skip: Int) {
        guard let filter, let bound = Self.lowerBound(filter) else { return nil }
        self.init(updatedAt: bound.updatedAt, id: bound.id, skip: skip)
    }

    /// The position of a `$changes` request's cursor.
    init(cursor: ChangeCursor) {
        self.init(updatedAt: cursor.updatedAt, id: cursor.id, skip: 0)
    }

    init(updatedAt: Int64, id: String, skip: Int) {
        self.updatedAt = updatedAt
        self.id = id
        self.skip = skip
    }

    /// Whether the filter's bound takes the row at the position itself (`updatedAt ge T`): the
    /// answer then holds again the row the device has there.
    static func isInclusive(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .comparison(let op, .member(let name, _), .literal(.date)) where isUpdatedAt(name):
            op == .ge || op == .eq
        case .comparison(let op, .literal(.date), .member(let name, _)) where isUpdatedAt(name):
            op == .le || op == .eq
        case .and(let left, let right):
            // The keyset's `updatedAt eq T and id gt 'I'` is past the row at (T, I).
            (equalStamp(left) ?? equalStamp(right)) != nil && (idBound(left) ?? idBound(right)) != nil
                ? false : isInclusive(left) || isInclusive(right)
        case .or(let left, let right):
            isInclusive(left) || isInclusive(right)
        default:
            false
        }
    }

    private struct Bound: Comparable {
        var updatedAt: Int64
        var id: String
        static func < (lhs: Bound, rhs: Bound) -> Bool { (lhs.updatedAt, lhs.id) < (rhs.updatedAt, rhs.id) }
    }

    /// The least `(updatedAt, id)` every row matching `expression` is at or after; nil when the
    /// filter does not bound `updatedAt` from below.
    private static func lowerBound(_ expression: FilterExpression) -> Bound? {
        switch expression {
        case .comparison(let op, .member(let name, _), .literal(.date(let date))) where isUpdatedAt(name):
            return [.gt, .ge, .eq].contains(op) ? Bound(updatedAt: date, id: "") : nil
        case .comparison(let op, .literal(.date(let date)), .member(let name, _)) where isUpdatedAt(name):
            return [.lt, .le, .eq].contains(op) ? Bound(updatedAt: date, id: "") : nil
        case .and(let left, let right):
            // The keyset cursor's second half: `updatedAt eq T and id gt 'I'`.
            if let equal = equalStamp(left) ?? equalStamp(right), let id = idBound(right) ?? idBound(left) {
                return Bound(updatedAt: equal, id: id)
            }
            switch (lowerBound(left), lowerBound(right)) {
            case (let l?, let r?): return max(l, r)
            case (let l?, nil): return l
            case (nil, let r?): return r
            case (nil, nil): return nil
            }
        case .or(let left, let right):
            guard let l = lowerBound(left), let r = lowerBound(right) else { return nil }
            // The keyset `(updatedAt gt T) or (updatedAt eq T and id gt 'I')` starts past (T, I).
            if l.updatedAt == r.updatedAt, isStrictlyAfter(left) != isStrictlyAfter(right) {
                return isStrictlyAfter(left) ? r : l
            }
            return min(l, r)
        default:
            return nil
        }
    }

    /// Whether `expression` is `updatedAt gt T` (past every row at T).
    private static func isStrictlyAfter(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .comparison(.gt, .member(let name, _), .literal(.date)) where isUpdatedAt(name): true
        case .comparison(.lt, .literal(.date), .member(let name, _)) where isUpdatedAt(name): true
        default: false
        }
    }

    private static func equalStamp(_ expression: FilterExpression) -> Int64? {
        if case .comparison(.eq, .member(let name, _), .literal(.date(let date))) = expression, isUpdatedAt(name) {
            return date
        }
        return nil
    }

    private static func idBound(_ expression: FilterExpression) -> String? {
        if case .comparison(let op, .member(let name, _), .literal(.string(let id))) = expression,
            op == .gt || op == .ge, name.lowercased() == "id"
        {
            return id
        }
        return nil
    }

    private static func isUpdatedAt(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "updatedat" || lower == "__updatedat"
    }
}
