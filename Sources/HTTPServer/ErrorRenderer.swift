/// The default error responses of this layer.
public enum ErrorRenderer {
    /// JSON `{"error": "..."}` when the client asks for JSON, otherwise a small HTML page.
    public static func standard(_ request: Request, _ error: any HTTPResponseError) -> Response {
        if request.prefersJSON { return .jsonError(error.message, status: error.status) }
        let title = "\(error.status.code) \(error.status.reasonPhrase)"
        return .html(
            """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escapeHTML(title))</title></head>
            <body><h1>\(escapeHTML(title))</h1><p>\(escapeHTML(error.message))</p></body></html>
            """,
            status: error.status)
    }

    /// Escapes `& < > " '` for use in HTML text and attribute values.
    public static func escapeHTML(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(character)
            }
        }
        return output
    }
}
