import Foundation

/// Which table service a store syncs with: the service's address reduced to what names it — scheme,
/// host, port and path — so that `HTTP://Example.org:80/app/` and `http://example.org/app` are the
/// same service while another port or another path is another one.
///
/// A service reached under another name (the dashboard's embedded service, whose address follows
/// the dashboard's port) has a fixed ``init(name:)`` instead.
public struct ServiceIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The normalised address (`http://example.org:80/app`), or `name:` and the name.
    public let text: String

    /// The identity of the service at `url`; nil when `url` is not an http(s) address with a host.
    public init?(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        text = "\(scheme)://\(hostPart):\(port)\(path)"
    }

    /// A service known by a fixed name rather than by its address.
    public init(name: String) {
        text = "name:" + name
    }

    /// Restores an identity saved with ``text``.
    init(saved: String) {
        text = saved
    }

    /// The normalised address or the name, as a person reads it.
    public var description: String {
        text.hasPrefix("name:") ? String(text.dropFirst(5)) : text
    }
}
