import Foundation
import HTTPServer
import SyncProtocol

/// How a protocol answers a list request: the body around the page's items and the way to the
/// next page.
enum PageEnvelope: Sendable {
    /// Mobile Apps: the bare array, or `{"results": [...], "count": N}` with `$inlinecount`; the
    /// next page in a `Link` header when the page is full.
    case mobileApps
    /// Datasync v3: `{"items": [...], "count": N or null, "nextLink": "query" or null}`.
    case datasync

    /// The list answer for `page`, which `options` (read from `queryItems`) asked for.
    func response(
        _ page: TablePage, options: QueryOptions, request: Request, queryItems: [(name: String, value: String)],
        publicURL: String?
    ) -> Response {
        switch self {
        case .mobileApps:
            var body = page.items
            if let count = page.count {
                body = Array(#"{"results":"#.utf8) + body + Array(#","count":\#(count)}"#.utf8)
            }
            var response = Response.json(data: Data(body))
            if options.top > 0, page.rows == options.top {
                response.headers[.link] = NextPageLink.header(
                    for: request, queryItems: queryItems, skip: options.skip + options.top, publicURL: publicURL)
            }
            return response
        case .datasync:
            var body = Array(#"{"items":"#.utf8) + page.items
            body += Array(#","count":"#.utf8)
            if options.inlineCount, let count = page.count {
                body += Array(String(count).utf8)
            } else {
                body += Array("null".utf8)
            }
            body += Array(#","nextLink":"#.utf8)
            if let link = Self.nextLink(page, options: options, queryItems: queryItems) {
                JSONValue.writeString(link, to: &body)
            } else {
                body += Array("null".utf8)
            }
            body.append(UInt8(ascii: "}"))
            return Response.json(data: Data(body))
        }
    }

    /// v3's `nextLink`: the request's own query with `$skip` moved past this page and `$top`
    /// lowered by it (when given), percent-encoded; `nil` when no row is left or `$top` is used up.
    static func nextLink(
        _ page: TablePage, options: QueryOptions, queryItems: [(name: String, value: String)]
    ) -> String? {
        let skip = options.skip + page.rows
        var remainingTop: Int?
        if let top = options.requestedTop {
            guard top - page.rows > 0 else { return nil }
            remainingTop = top - page.rows
        }
        let more = page.hasMore ?? page.count.map { skip < $0 } ?? false
        guard more, page.rows > 0 else { return nil }
        var items = queryItems.filter { !["$skip", "$top"].contains($0.name.lowercased()) }
        items.append(("$skip", String(skip)))
        if let remainingTop { items.append(("$top", String(remainingTop))) }
        return items.map { NextPageLink.encode($0.name) + "=" + NextPageLink.encode($0.value) }.joined(separator: "&")
    }
}

extension ProtocolStyle {
    /// How this protocol wraps pages.
    var pageEnvelope: PageEnvelope {
        switch self {
        case .v2, .legacy: .mobileApps
        case .v3: .datasync
        }
    }
}
