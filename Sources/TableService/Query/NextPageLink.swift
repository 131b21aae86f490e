import Foundation
import HTTPServer

/// The `Link: <url>; rel=next` header of a full page: absolute, bracketed, with the request's own
/// query and `$skip` advanced (the official server's has no brackets, port or path).
enum NextPageLink {
    /// The query of a list request. The official JavaScript client follows a `Link` by sending
    /// it whole, brackets included, as the query: `GET /tables/todoitem?<http://host/tables/todoitem?$skip=50>`.
    /// That form is read as the link's own query; a link to another table, or a bracket that does
    /// not close, is a 400 (answering another page would be silently wrong).
    static func queryItems(of request: Request, table: String) throws(TableError) -> [(name: String, value: String)] {
        var items = request.queryItems
        guard items.contains(where: { $0.name.hasPrefix("<") }) else { return items }
        guard items[0].name.hasPrefix("<") else { throw .invalidQuery(malformed) }
        // The link closes at the first '>' of the last option (in its value, or its name when it has none).
        let last = items.count - 1
        if let close = items[last].value.firstIndex(of: ">") {
            items[last].value = String(items[last].value[..<close])
        } else if let close = items[last].name.firstIndex(of: ">") {
            items[last].name = String(items[last].name[..<close])
        } else {
            throw .invalidQuery(malformed)
        }
        // It opens with the address up to its '?'; what follows is the name of the first option.
        let opening = items[0].name.dropFirst()
        let address: Substring
        if let mark = opening.firstIndex(of: "?") {
            address = opening[..<mark]
            items[0].name = String(opening[opening.index(after: mark)...])
        } else {
            address = opening
            items[0].name = ""
        }
        let segments = (URLComponents(string: String(address))?.path ?? String(address)).split(separator: "/")
        guard segments.count >= 2, segments[segments.count - 2] == "tables",
            segments[segments.count - 1].lowercased() == table.lowercased()
        else {
            throw .invalidQuery(
                "The query is a link to another address (\(address)) than this table's; follow the link itself, "
                    + "or send only its query.")
        }
        return items.filter { !$0.name.isEmpty }
    }

    private static let malformed =
        "The query starts a bracketed link (<http://…>) that does not close with '>'; send the link's own query "
        + "(such as ?$skip=50), or the link itself without brackets."

    /// The header value, built from `publicURL` when configured, else from the request's `Host`.
    /// `nil` when neither gives a usable origin.
    static func header(
        for request: Request, queryItems: [(name: String, value: String)], skip: Int, publicURL: String?
    ) -> String? {
        let origin: String
        if let publicURL {
            origin = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        } else if let host = request.authority, isPlausibleHost(host) {
            origin = "http://" + host
        } else {
            return nil
        }
        var items = queryItems.filter { $0.name != "$skip" }
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
