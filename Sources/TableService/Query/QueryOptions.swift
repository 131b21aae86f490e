import Foundation
import SyncProtocol

/// The OData query options of a list request, read from its query string by the protocol's
/// ``QueryRules`` but not yet checked against a table (see ``QueryCompiler``).
struct QueryOptions: Sendable, Equatable {
    var filter: String?
    var orderBy: String?
    /// The rows of this page: `$top` (capped by the page size in v3), or the page size.
    var top: Int
    var topWasGiven: Bool
    /// `$top` as asked for, `nil` without one.
    var requestedTop: Int?
    var skip: Int
    var select: String?
    /// Whether the answer carries the total count (`$inlinecount=allpages`, or `$count=true` in v3).
    var inlineCount: Bool
    var includeDeleted: Bool

    /// Reads `$filter`, `$orderby`, `$top`, `$skip`, `$select`, the count option and
    /// `__includeDeleted` as `rules` say.
    ///
    /// `pageLimit` is the most rows a page holds when `rules` cap `$top` (v3; `nil` is `defaultTop`).
    init(
        queryItems: [(name: String, value: String)], defaultTop: Int, maximumTop: Int,
        rules: QueryRules = .mobileApps, pageLimit: Int? = nil
    ) throws(TableError) {
        func value(_ name: String) -> String? {
            queryItems.first { $0.name.lowercased() == name.lowercased() }?.value
        }
        /// The option `name` as `yes` or `no` (absent: no); another word is refused.
        func flag(_ name: String, yes: String = "true", no: String = "false") throws(TableError) -> Bool {
            switch value(name)?.lowercased() {
            case nil, no: return false
            case yes: return true
            case let other?: throw .invalidQuery("\(name) must be '\(yes)' or '\(no)'; '\(other)' is not.")
            }
        }
        filter = value("$filter").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        orderBy = value("$orderby").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        select = value("$select").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        let maximumTop = rules.maximumTop ?? maximumTop
        if let text = value("$top") {
            guard let top = Int(text.trimmingCharacters(in: .whitespaces)), top >= 0 else {
                throw .invalidQuery("$top must be a whole number from 0 to \(maximumTop); '\(text)' is not.")
            }
            guard top <= maximumTop else { throw .invalidQuery(ProtocolMessage.tooManyRecords(maximum: maximumTop)) }
            self.top = rules.pageSizeCapsTop ? min(top, pageLimit ?? defaultTop) : top
            requestedTop = top
            topWasGiven = true
        } else {
            top = defaultTop
            requestedTop = nil
            topWasGiven = false
        }
        if let text = value("$skip") {
            // Bounded as /openapi.json says (OData's Edm.Int32): no table is paged that far.
            guard let skip = Int(text.trimmingCharacters(in: .whitespaces)), (0...Int(Int32.max)).contains(skip) else {
                throw .invalidQuery("$skip must be a whole number from 0 to \(Int32.max); '\(text)' is not.")
            }
            self.skip = skip
        } else {
            skip = 0
        }
        inlineCount =
            switch rules.countOption {
            case .inlineCount: try flag("$inlinecount", yes: "allpages", no: "none")
            case .count: try flag("$count")
            }
        includeDeleted =
            rules.strictIncludeDeleted
            ? try flag("__includeDeleted") : value("__includeDeleted")?.lowercased() == "true"
    }
}
