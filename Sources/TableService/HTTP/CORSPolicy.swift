import Foundation
import HTTPServer
import HTTPTypes

/// Which web pages may call the service, and cross-origin access for them as the official server
/// answers it: preflights from an allowed origin are answered 200 with the allowed methods and
/// headers, and responses to allowed origins expose `Link`, `ETag` and `X-TodoSync-Epoch`.
///
/// This is the one place that decides: ``WriteGuard`` refuses writes from any other page.
struct CORSPolicy: Sendable {
    /// Origins, besides the service's own, whose pages may call the service.
    let allowedOrigins: Set<WebOrigin>

    static let methods = "GET, PUT, PATCH, POST, DELETE, OPTIONS"

    /// Whether a page on `origin` (the request's `Origin`, such as `http://localhost:3000`) may
    /// make `request`: the service's own origin (the scheme, host and port the request was sent
    /// to, as its `Host` says) or one of ``allowedOrigins``. Same host on another port is another site.
    func allows(_ origin: String, on request: Request) -> Bool {
        guard let origin = WebOrigin(origin) else { return false }
        if let host = request.authority, origin == WebOrigin(scheme: "http", authority: host) { return true }
        return allowedOrigins.contains(origin)
    }

    /// The answer to `OPTIONS`: 200 with `Allow` (the methods of the address in the request's
    /// protocol) and the CORS headers for an allowed origin.
    func preflight(_ request: Request, allow: String) -> Response {
        var response = Response.text(allow)
        response.headers[.allow] = allow
        if let origin = request.headers[.origin], allows(origin, on: request) {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlAllowMethods] = Self.methods
            if let asked = request.headers[.accessControlRequestHeaders], isPlainHeaderList(asked) {
                response.headers[.accessControlAllowHeaders] = asked
            }
            response.headers[.accessControlMaxAge] = "300"
            response.headers[.accessControlExposeHeaders] = "Link,Etag,X-TodoSync-Epoch"
            response.headers[.vary] = "Origin"
        }
        return response
    }

    /// Adds `Access-Control-Allow-Origin` to a response for an allowed origin.
    func decorate(_ request: Request, _ response: inout Response) {
        guard let origin = request.headers.value(.origin), allows(origin, on: request) else { return }
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = "Link,Etag,X-TodoSync-Epoch"
        response.headers[.vary] = "Origin"
    }

    private func isPlainHeaderList(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_, ".unicodeScalars.contains($0))
        }
    }
}
