import Foundation
import HTTPTypes

/// What the transport does with a redirect answer: follow it, or refuse it without sending
/// anything to its target.
///
/// The application key, the auth token and the pushed items are meant for one service. A
/// redirect to another scheme, host or port is never followed; one within the same origin is
/// followed for reads (GET) only, since a write's body must not be replayed by surprise.
enum RedirectPolicy {
    /// The statuses that carry a `Location` to go to.
    static let redirectStatuses: Set<HTTPResponse.Status> = [
        .movedPermanently, .found, .seeOther, .temporaryRedirect, .permanentRedirect,
    ]
    /// Redirects followed for one request before giving up.
    static let maximumHops = 5

    enum Decision: Equatable {
        case follow(URL)
        /// Not followed; the target as the error names it.
        case refuse(String)
    }

    /// The decision for a `status` answer to `method` on `current`, whose `Location` is `location`,
    /// for a service whose origin is `service`.
    static func decide(method: HTTPRequest.Method, current: URL, location: String?, service: URL) -> Decision {
        guard let location, let target = URL(string: location, relativeTo: current)?.absoluteURL else {
            return .refuse(location ?? "(no Location header)")
        }
        guard sameOrigin(target, service), method == .get else {
            return .refuse(target.absoluteString)
        }
        return .follow(target)
    }

    /// Same scheme, host and port (a missing port is the scheme's default).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        guard let schemeA = a.scheme?.lowercased(), let schemeB = b.scheme?.lowercased(),
            let hostA = a.host?.lowercased(), let hostB = b.host?.lowercased()
        else { return false }
        return schemeA == schemeB && hostA == hostB && effectivePort(a) == effectivePort(b)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
