import HTTPServer
import HTTPTypes
import SyncProtocol

/// The conditional headers of a v3 request, as Datasync reads them: in `If-Match` and
/// `If-None-Match` a strong tag matches the version it names, `*` matches any existing item, and a
/// weak tag (`W/"…"`) never matches. `If-Unmodified-Since` is read only without `If-Match`, and
/// `If-Modified-Since` only without `If-None-Match`; both compare whole seconds, the precision of
/// `Last-Modified`, so a client that sends back the `Last-Modified` it got sees the item as unchanged.
struct Preconditions: Sendable, Equatable {
    /// The tags of one header.
    enum Tags: Sendable, Equatable {
        case any
        /// The strong tags' versions (weak ones left out: they match nothing).
        case versions([String])

        /// Whether `item`'s version is one of the tags.
        func match(_ item: StoredItem) -> Bool {
            switch self {
            case .any: true
            case .versions(let versions): !item.version.isEmpty && versions.contains(item.version)
            }
        }

        init(_ header: String) {
            var versions: [String] = []
            for part in header.split(separator: ",") {
                let tag = part.trimmingWhitespace()
                if tag == "*" {
                    self = .any
                    return
                }
                if let version = EntityTag.version(from: tag) { versions.append(version) }
            }
            self = .versions(versions)
        }
    }

    var ifMatch: Tags?
    var ifNoneMatch: Tags?
    /// `If-Unmodified-Since`, in milliseconds since 1970 (a date that cannot be read is ignored).
    var ifUnmodifiedSince: Int64?
    /// `If-Modified-Since`, likewise.
    var ifModifiedSince: Int64?

    init(_ request: Request) {
        ifMatch = request.headers[.ifMatch].map(Tags.init)
        ifNoneMatch = request.headers[.ifNoneMatch].map(Tags.init)
        ifUnmodifiedSince = ifMatch == nil ? request.headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse) : nil
        ifModifiedSince = ifNoneMatch == nil ? request.headers[.ifModifiedSince].flatMap(HTTPDate.parse) : nil
    }

    /// The headers with `before` (the version `current` had before schema backfills stamped it,
    /// see ``BackfillMarker``) taken as `current`'s own in `If-Match`.
    func accepting(versionBeforeBackfill before: String?, of current: StoredItem) -> Preconditions {
        guard let before, case .versions(let versions) = ifMatch, versions.contains(before) else { return self }
        var accepted = self
        accepted.ifMatch = .versions(versions + [current.version])
        return accepted
    }

    /// Whether `current` changed after `date` (compared in whole seconds).
    private static func changed(_ current: StoredItem, after date: Int64) -> Bool {
        current.updatedAt / 1000 > date / 1000
    }

    /// Whether the headers that must hold for any method hold for `current`.
    private func holds(for current: StoredItem) -> Bool {
        if let ifMatch, !ifMatch.match(current) { return false }
        if let ifUnmodifiedSince, Self.changed(current, after: ifUnmodifiedSince) { return false }
        return true
    }

    /// Whether `current` is the one the client has (`If-None-Match` matches, or it has not
    /// changed since `If-Modified-Since`): a GET answers 304 (after ``failure(reading:)``).
    func isNotModified(_ current: StoredItem) -> Bool {
        if let ifNoneMatch { return ifNoneMatch.match(current) }
        if let ifModifiedSince { return !Self.changed(current, after: ifModifiedSince) }
        return false
    }

    /// What a write may do to `current`: `nil` to go on, else the error (412 with the item).
    func failure(writing current: StoredItem) -> TableError? {
        holds(for: current) && !isNotModified(current) ? nil : .preconditionFailed(current)
    }

    /// What a read of `current` answers: `nil` for the item, else 412 (with the item).
    func failure(reading current: StoredItem) -> TableError? {
        holds(for: current) ? nil : .preconditionFailed(current)
    }

    /// The version a write checks atomically with the write: the current one whenever a header
    /// asked for a check, so that a change in between is a 412 too.
    func expectedVersion(of current: StoredItem) -> String? {
        ifMatch == nil && ifNoneMatch == nil && ifUnmodifiedSince == nil && ifModifiedSince == nil
            ? nil : current.version
    }
}
