import Foundation
import HTTPServer

/// The answer of a `/metrics` route: the Prometheus text exposition format, version 0.0.4.
public enum PrometheusExposition {
    /// The format's content type.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A 200 with `text` (as a registry's `emitToBuffer()` gives it), never cached.
    public static func response(_ text: [UInt8]) -> Response {
        var response = Response(body: Data(text))
        response.headers[.contentType] = contentType
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
