import Foundation
import SyncProtocol

/// The OData query options of a list request, read from its query string but not yet checked
/// against a table (see ``QueryCompiler``).
struct QueryOptions: Sendable, Equatable {
    var filter: String?
    var orderBy: String?
    /// The page size: `$top`, or the service's default page size.
    var top: Int
    var topWasGiven: Bool
    var skip: Int
    var select: String?
    var inlineCount: Bool
    var includeDeleted: Bool

    /// Reads `$filter`, `$orderby`, `$top`, `$skip`, `$select`, `$inlinecount` and `__includeDeleted`.
    init(queryItems: [(name: String, value: String)], defaultTop: Int, maximumTop: Int) throws(TableError) {
        func value(_ name: String) -> String? {
            queryItems.first { $0.name.lowercased() == name.lowercased() }?.value
        }
        filter = value("$filter").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        orderBy = value("$orderby").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        select = value("$select").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        if let text = value("$top") {
            guard let top = Int(text.trimmingCharacters(in: .whitespaces)), top >= 0 else {
                throw .invalidQuery("$top must be a whole number from 0 to \(maximumTop); '\(text)' is not.")
            }
            guard top <= maximumTop else { throw .invalidQuery(ProtocolMessage.tooManyRecords(maximum: maximumTop)) }
            self.top = top
            topWasGiven = true
        } else {
            top = defaultTop
            topWasGiven = false
        }
        if let text = value("$skip") {
            guard let skip = Int(text.trimmingCharacters(in: .whitespaces)), skip >= 0 else {
                throw .invalidQuery("$skip must be a whole number of 0 or more; '\(text)' is not.")
            }
            self.skip = skip
        } else {
            skip = 0
        }
        switch value("$inlinecount")?.lowercased() {
        case nil, "none": inlineCount = false
        case "allpages": inlineCount = true
        case let other?:
            throw .invalidQuery("$inlinecount must be 'allpages' or 'none'; '\(other)' is not.")
        }
        switch value("__includeDeleted")?.lowercased() {
        case nil, "false": includeDeleted = false
        case "true": includeDeleted = true
        case let other?:
            throw .invalidQuery("__includeDeleted must be 'true' or 'false'; '\(other)' is not.")
        }
    }
}
