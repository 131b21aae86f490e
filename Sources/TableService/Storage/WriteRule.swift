/// The protocol's rule for a write to an existing row, once for both stores: from the row as it is
/// now, the write asked for and the checks it carries, whether the store writes, answers the row
/// unchanged, or refuses. Each store performs the decision its own way (SQLite inside its write
/// transaction; PostgreSQL after a conditional `UPDATE` that found no row to change).
enum WriteRule {
    /// A write to an existing row.
    enum Request: Sendable, Equatable {
        /// Merges fields into a live row (PATCH, PUT).
        case update(VersionCheck)
        /// Soft-deletes (`true`) or brings back (`false`) the row.
        case setDeleted(Bool, ifMatch: String?)
        /// Removes the row (tables declared without soft delete).
        case remove(ifMatch: String?)
    }

    /// What the store does.
    enum Decision: Sendable, Equatable {
        /// Writes the row (a new stamp and version).
        case write
        /// Answers the row as it is: already in the state asked for.
        case unchanged(StoredItem)
        /// Refuses, with the error to answer.
        case refuse(TableError)
    }

    /// Whether deciding `request` on `current` needs the version the row had before schema
    /// backfills stamped it (``BackfillMarker``): only when the versions the request expects differ
    /// from the row's, since a client that read the row before a backfill does not conflict with it.
    static func needsVersionBeforeBackfill(_ request: Request, current: StoredItem?) -> Bool {
        guard let current else { return false }
        return expected(request).contains { $0 != current.version }
    }

    /// The decision for `request` on the row `current` (nil: no such row in the caller's scope),
    /// `before` being the version it had before schema backfills stamped it, when that is known.
    static func decide(_ request: Request, current: StoredItem?, versionBeforeBackfill before: String?) -> Decision {
        guard let current else { return .refuse(.itemNotFound) }
        switch request {
        case .update(let check):
            guard !current.deleted else { return .refuse(.itemNotFound) }
            if let failure = check.accepting(versionBeforeBackfill: before).failure(for: current) {
                return .refuse(failure)
            }
            return .write
        case .setDeleted(let deleted, let ifMatch):
            if deleted, current.deleted { return .refuse(.itemNotFound) }
            if let failure = ifMatchFailure(ifMatch, current, before) { return .refuse(failure) }
            return current.deleted == deleted ? .unchanged(current) : .write
        case .remove(let ifMatch):
            if let failure = ifMatchFailure(ifMatch, current, before) { return .refuse(failure) }
            return .write
        }
    }

    /// The versions `request` expects the row to have.
    private static func expected(_ request: Request) -> [String] {
        switch request {
        case .update(let check): [check.ifMatch, check.bodyVersion].compactMap { $0 }
        case .setDeleted(_, let ifMatch), .remove(let ifMatch): ifMatch.map { [$0] } ?? []
        }
    }

    /// The 412 for an `If-Match` that is neither the row's version nor the one before backfills.
    private static func ifMatchFailure(_ ifMatch: String?, _ current: StoredItem, _ before: String?) -> TableError? {
        guard let ifMatch, ifMatch != current.version, ifMatch != before else { return nil }
        return .preconditionFailed(current)
    }
}
