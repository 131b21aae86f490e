import HTTPServer
import HTTPTypes
import SyncProtocol

/// The conditional headers of a v3 request (`If-Match`, `If-None-Match`), as Datasync reads
/// them: a strong tag matches the version it names, `*` matches any existing item, and a weak
/// tag (`W/"…"`) never matches.
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

    init(_ request: Request) {
        ifMatch = request.headers[.ifMatch].map(Tags.init)
        ifNoneMatch = request.headers[.ifNoneMatch].map(Tags.init)
    }

    /// What the request may do to `current`: `nil` to go on, else the error (412 with the item).
    /// A read whose `If-None-Match` matches is not modified (``isNotModified(_:)``).
    func failure(writing current: StoredItem) -> TableError? {
        if let ifMatch, !ifMatch.match(current) { return .preconditionFailed(current) }
        if let ifNoneMatch, ifNoneMatch.match(current) { return .preconditionFailed(current) }
        return nil
    }

    /// Whether a GET answers 304.
    func isNotModified(_ current: StoredItem) -> Bool {
        ifNoneMatch?.match(current) ?? false
    }

    /// The version a write checks atomically with the write: the current one whenever a header
    /// asked for a check, so that a change in between is a 412 too.
    func expectedVersion(of current: StoredItem) -> String? {
        ifMatch == nil && ifNoneMatch == nil ? nil : current.version
    }
}
