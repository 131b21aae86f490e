import Foundation

/// What a reconcile after the service went back in time (a new ``ServiceEpoch``) does with one row:
/// a pure function from the local copy, the service's copy and whether the row has a queued change.
///
/// Nothing is deleted silently: a row this store synced and the service no longer has, or has older
/// values of, becomes a conflict that a person decides like any other.
enum RestoreRule {
    /// What a reconcile reads of a copy. `updatedAt` is the service's stamp of the copy, in
    /// milliseconds (a local copy keeps the stamp of the service's copy it last took in).
    struct Copy: Sendable, Hashable {
        var version: String?
        var updatedAt: Int64?
        var deleted = false
    }

    enum Decision: Sendable, Hashable {
        /// Leave the local row as it is: the same copy, or a queued change that its push settles.
        case keep
        /// Write the service's copy here (or remove the local row, when the service's is deleted),
        /// as a pull does: the service's is as new as ours, or newer.
        case takeService
        /// A conflict: the service no longer has the row this store synced.
        case goneFromService
        /// A conflict: the service holds older values than this store synced.
        case restoredOlder
    }

    static func decide(local: Copy?, service: Copy?, queued: Bool) -> Decision {
        if queued { return .keep }
        switch (local, service) {
        case (nil, nil):
            return .keep
        case (nil, .some(let service)):
            return service.deleted ? .keep : .takeService
        case (.some, nil):
            return .goneFromService
        case (.some(let local), .some(let service)):
            if local.version == service.version, !service.deleted { return .keep }
            guard isNewer(local, than: service) else { return .takeService }
            // The service's copy predates ours: its delete, or its values, are what the restore brought back.
            return service.deleted ? .goneFromService : .restoredOlder
        }
    }

    /// Whether the local copy was stamped after the service's.
    private static func isNewer(_ local: Copy, than service: Copy) -> Bool {
        guard let mine = local.updatedAt else { return false }
        guard let theirs = service.updatedAt else { return true }
        return mine > theirs
    }
}
