import Foundation
import HTTPTypes

/// Refuses requests whose `Host` names another machine than the one the server was started for,
/// so that a web page on another site cannot reach a loopback server through DNS rebinding.
/// Only the name is compared: the port does not matter to a rebinding attack. IP addresses are
/// always accepted.
///
/// Every server of the product (`todosync serve`, `demo`, the dashboard) puts this first in its
/// middleware; `--allowed-host` adds the names a deployed service answers for.
public struct HostAllowList: Middleware {
    private let allowed: Set<String>
    /// The name the refusal suggests opening instead (the first accepted name).
    private let suggested: String

    /// - Parameter names: accepted host names, such as `127.0.0.1`, `localhost` or `[::1]`
    ///   (a port, if given, is ignored).
    public init(_ names: [String]) {
        let names = names.map(Self.name(of:)).filter { !$0.isEmpty }
        allowed = Set(names)
        suggested = names.first ?? "127.0.0.1"
    }

    /// The names of a server bound to `host`: the address itself, plus the loopback names
    /// when it is a loopback or wildcard (every interface) address, plus `extraNames`
    /// (such as `todo.example.org` for a service behind that name).
    public init(boundTo host: String, extraNames: [String] = []) {
        var names = [host.contains(":") ? "[\(host)]" : host]
        if ["0.0.0.0", "::"].contains(host) {
            names = ["127.0.0.1", "localhost", "[::1]"]
        } else if host.hasPrefix("127.") || host == "::1" {
            names += ["localhost", "127.0.0.1", "[::1]"]
        }
        self.init(names + extraNames)
    }

    public func intercept(_ request: inout Request) throws -> Response? {
        let header = request.authority ?? ""
        let host = Self.name(of: header)
        guard allowed.contains(host) || Self.isIPLiteral(host) else {
            let port = Self.port(of: header).map { ":\($0)" } ?? ""
            throw HTTPError(
                .misdirectedRequest,
                "This server does not answer for the host name '\(host)'. Open it by its address, such as "
                    + "http://\(suggested)\(port)/, or start it with --allowed-host \(host.isEmpty ? "NAME" : host)."
            )
        }
        return nil
    }

    /// The port of a `Host` header (`example.org:8123` → `8123`, `[::1]:80` → `80`), if it names one.
    static func port(of host: String) -> Int? {
        let afterAddress = host.hasPrefix("[") ? host.drop { $0 != "]" }.dropFirst() : Substring(host)
        guard let colon = afterAddress.lastIndex(of: ":") else { return nil }
        return Int(afterAddress[afterAddress.index(after: colon)...])
    }

    /// An address such as `192.168.1.5` or `[::1]`: rebinding needs a DNS name, so addresses are
    /// safe to accept (and needed when the server listens on every interface).
    static func isIPLiteral(_ name: String) -> Bool {
        if name.hasPrefix("["), name.hasSuffix("]") {
            var address = in6_addr()
            return inet_pton(AF_INET6, String(name.dropFirst().dropLast()), &address) == 1
        }
        var address = in_addr()
        return inet_pton(AF_INET, name, &address) == 1
    }

    /// `Host` without its port, lowercased: `LOCALHOST:8080` → `localhost`, `[::1]:80` → `[::1]`.
    static func name(of host: String) -> String {
        let lowered = host.lowercased()
        if lowered.hasPrefix("["), let end = lowered.firstIndex(of: "]") { return String(lowered[...end]) }
        // The first run of characters between colons (what `split(separator: ":").first` gives,
        // without building the array of pieces).
        return String(lowered.drop { $0 == ":" }.prefix { $0 != ":" })
    }
}
