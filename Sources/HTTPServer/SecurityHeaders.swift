/// Adds the headers every dashboard page needs: a Content-Security-Policy without inline
/// script, `X-Frame-Options: DENY` (no clickjacking of buttons), `nosniff` and no referrer leaks.
public struct SecurityHeaders: Middleware {
    public init() {}

    public func finish(_ request: Request, _ response: inout Response) {
        response.headers["Content-Security-Policy"] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        if response.headers["Cache-Control"] == nil { response.headers["Cache-Control"] = "no-store" }
    }
}

/// Refuses requests whose `Host` is not one of the names the server was started for,
/// so that a web page on another site cannot reach a loopback server through DNS rebinding.
public struct HostAllowList: Middleware {
    private let allowed: Set<String>

    /// - Parameter hosts: accepted `Host` values, with or without port (`127.0.0.1:8080`, `localhost`).
    public init(_ hosts: [String]) {
        allowed = Set(hosts.map { $0.lowercased() })
    }

    /// The usual names of a server bound to `host:port`: the address itself, plus `localhost`
    /// when it is a loopback address.
    public init(boundTo host: String, port: Int) {
        var names = [host]
        if host.hasPrefix("127.") || host == "::1" { names += ["localhost", "127.0.0.1", "[::1]"] }
        if host.contains(":") && !host.hasPrefix("[") { names.append("[\(host)]") }
        self.init(names.flatMap { [$0, "\($0):\(port)"] })
    }

    public func intercept(_ request: inout Request) throws -> Response? {
        guard let host = request.headers["Host"]?.lowercased(), allowed.contains(host) else {
            throw HTTPError(421, "This server does not answer for that host name. Open it by its address, such as http://127.0.0.1.")
        }
        return nil
    }
}
