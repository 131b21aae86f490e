import HTTPServer

/// The `Link: <url>; rel=next` header of a full page: absolute, bracketed, with the request's own
/// query and `$skip` advanced (the official server's has no brackets, port or path).
enum NextPageLink {
    /// The header value, built from `publicURL` when configured, else from the request's `Host`.
    /// `nil` when neither gives a usable origin.
    static func header(for request: Request, skip: Int, publicURL: String?) -> String? {
        let origin: String
        if let publicURL {
            origin = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        } else if let host = request.headers["Host"], isPlausibleHost(host) {
            origin = "http://" + host
        } else {
            return nil
        }
        var items = request.queryItems.filter { $0.name != "$skip" }
        items.append(("$skip", String(skip)))
        let path = request.pathSegments.map { encode($0) }.joined(separator: "/")
        let query = items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
        return "<\(origin)/\(path)?\(query)>; rel=next"
    }

    /// A `Host` value made only of characters a host and port can have (it goes into a header).
    static func isPlausibleHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255
            && host.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                        || "-.:[]_".unicodeScalars.contains(scalar))
            }
    }

    /// Percent-encodes all but unreserved characters and the few OData needs to stay readable.
    static func encode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if scalar.isASCII,
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "-._~$'(),:*!".unicodeScalars.contains(scalar)
            {
                output.unicodeScalars.append(scalar)
            } else {
                output +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return output
    }
}
