import Foundation
import HTTPServer

/// Cross-origin access for browser clients, as the official server does it: preflights from an
/// allowed origin are answered 200 with the allowed methods and headers, and responses to allowed
/// origins expose `Link` and `ETag`.
struct CORSPolicy: Sendable {
    /// Host names (without scheme or port) whose pages may call the service; `*` allows any.
    let allowedHosts: [String]

    static let methods = "GET, PUT, PATCH, POST, DELETE, OPTIONS"
    static let allow = "GET,HEAD,POST,PATCH,DELETE"

    /// Whether `origin` (such as `http://localhost:8080`) may call the service.
    func allows(_ origin: String) -> Bool {
        if allowedHosts.contains("*") { return true }
        guard let host = URLComponents(string: origin)?.host?.lowercased() else { return false }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return allowedHosts.contains { $0.lowercased() == host || $0.lowercased() == bare }
    }

    /// The answer to `OPTIONS`: 200 with `Allow` (and the CORS headers for an allowed origin).
    func preflight(_ request: Request) -> Response {
        var response = Response.text(Self.allow)
        response.headers["Allow"] = Self.allow
        if let origin = request.headers["Origin"], allows(origin) {
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = Self.methods
            if let asked = request.headers["Access-Control-Request-Headers"], isPlainHeaderList(asked) {
                response.headers["Access-Control-Allow-Headers"] = asked
            }
            response.headers["Access-Control-Max-Age"] = "300"
            response.headers["Access-Control-Expose-Headers"] = "Link,Etag"
            response.headers["Vary"] = "Origin"
        }
        return response
    }

    /// Adds `Access-Control-Allow-Origin` to a response for an allowed origin.
    func decorate(_ request: Request, _ response: inout Response) {
        guard let origin = request.headers["Origin"], allows(origin) else { return }
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = "Link,Etag"
        response.headers["Vary"] = "Origin"
    }

    private func isPlainHeaderList(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_, ".unicodeScalars.contains($0))
        }
    }
}
