/// A web origin: scheme, host and port, as a browser names the site of a page in `Origin`
/// (`http://localhost:3000`). Two origins are the same only when all three are.
public struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`.
    public let scheme: String
    /// The host name or address, lowercased; an IPv6 address keeps its brackets (`[::1]`).
    public let host: String
    /// The port, the scheme's default (80, 443) when the origin names none.
    public let port: Int

    /// Reads an origin such as `http://localhost:3000` or `https://todo.example.org`: a scheme,
    /// a host and an optional port, nothing else (no path, query or user). `nil` for anything
    /// else, including the opaque origin `null`.
    public init?(_ text: String) {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        self.init(scheme: String(parts[0]), authority: String(parts[1]))
    }

    /// The origin of `scheme` and an authority as a `Host` header gives it (`127.0.0.1:8080`).
    init?(scheme: String, authority: String) {
        let scheme = scheme.lowercased()
        guard let defaultPort = ["http": 80, "https": 443][scheme] else { return nil }
        var host = Substring(authority.lowercased())
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: end)...]
            host = host[...end]
            guard host.count > 2, host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else { return nil }
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Self.port(rest.dropFirst()) else { return nil }
                port = number
            }
        } else {
            let pieces = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = pieces[0]
            guard !host.isEmpty,
                host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else { return nil }
            if pieces.count == 2 {
                guard let number = Self.port(pieces[1]) else { return nil }
                port = number
            }
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
    }

    /// The origin as a browser sends it: the port only when it is not the scheme's default.
    public var description: String {
        port == (scheme == "https" ? 443 : 80) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    private static func port(_ digits: Substring) -> Int? {
        guard (1...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = Int(digits),
            (1...65535).contains(number)
        else { return nil }
        return number
    }
}
