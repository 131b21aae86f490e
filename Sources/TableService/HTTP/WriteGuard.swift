import HTTPServer
import HTTPTypes

/// Refuses the table writes a web page on another site could send.
///
/// A page can make a browser send a "simple" cross-site request (a form, or `fetch` with a
/// `text/plain` body) without asking the service first. Two rules make that impossible: a write
/// from a browser page must come from the service's own origin or an allowed one (browsers always
/// send `Origin` on a write; ``CORSPolicy`` decides), and a write with a body must say
/// `Content-Type: application/json`, which a simple request cannot. Programs (the sync client,
/// curl, the official clients) send no `Origin` and JSON bodies, so they pass; so do bodiless
/// writes (DELETE, undelete).
struct WriteGuard: Sendable {
    let cors: CORSPolicy

    /// Whether `method` changes state; PUT is not in the protocol but is refused the same way first.
    /// (A `switch`: a `Set` of methods hashed the method's name at every request.)
    static func isWrite(_ method: HTTPRequest.Method) -> Bool {
        switch method {
        case .post, .patch, .put, .delete: true
        default: false
        }
    }

    /// Throws the refusal for a write that is not proven to come from a real client.
    func check(_ request: Request) throws(TableError) {
        guard Self.isWrite(request.method) else { return }
        if let origin = request.headers.value(.origin), !cors.allows(origin, on: request) {
            throw .foreignOrigin(origin)
        }
        let contentType = request.headers.value(.contentType)
        if let contentType, !Self.isJSON(contentType), !Self.isBundleUpload(request, contentType) {
            throw .unsupportedMediaType(contentType)
        }
        if contentType == nil, !request.body.isEmpty {
            throw .unsupportedMediaType(nil)
        }
    }

    /// A device's support bundle (`POST /devices/{id}/bundle`) is a zip, which a simple request
    /// cannot send either.
    static func isBundleUpload(_ request: Request, _ contentType: String) -> Bool {
        request.pathSegments.first == "devices" && request.pathSegments.last == "bundle"
            && contentType.prefix { $0 != ";" }.trimmingWhitespace().caseInsensitiveEquals("application/zip")
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), any letter case.
    static func isJSON(_ contentType: String) -> Bool {
        // What clients send, compared without building strings; any other spelling is parsed.
        if contentType.utf8.elementsEqual("application/json".utf8) { return true }
        let mediaType = contentType.prefix { $0 != ";" }
        return mediaType.trimmingWhitespace().caseInsensitiveEquals("application/json")
    }
}
