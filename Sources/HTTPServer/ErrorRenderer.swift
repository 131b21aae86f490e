/// The default error responses of this layer.
public enum ErrorRenderer {
    /// JSON `{"error": "..."}` when the client asks for JSON, otherwise a small HTML page.
    public static func standard(_ request: Request, _ error: any HTTPResponseError) -> Response {
        if request.prefersJSON { return .jsonError(error.message, status: error.status) }
        let title = "\(error.status.code) \(error.status.reasonPhrase)"
        return .html(
            """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTMLEscaping.escape(title))</title></head>
            <body><h1>\(HTMLEscaping.escape(title))</h1><p>\(HTMLEscaping.escape(error.message))</p></body></html>
            """,
            status: error.status)
    }

    /// JSON `{"error": "..."}` whatever the client asks for: a JSON API's errors.
    public static func json(_ request: Request, _ error: any HTTPResponseError) -> Response {
        .jsonError(error.message, status: error.status)
    }
}
