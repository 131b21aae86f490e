import Foundation
import SyncProtocol

/// What a doctor check reads of an exchange's answer.
extension RecordedExchange {
    /// The rows of a page in `dialect`'s form (v2: an array or `{results}`; v3: `{items}`), nil when
    /// the body is not a page.
    func rows(_ dialect: TableProtocol) -> [Item]? {
        switch (dialect, json) {
        case (.v2, .array(let values)?): values.compactMap(\.objectValue)
        case (.v2, .object(let object)?):
            if case .array(let values)? = object["results"] { values.compactMap(\.objectValue) } else { nil }
        case (.v3, .object(let object)?):
            if case .array(let values)? = object["items"] { values.compactMap(\.objectValue) } else { nil }
        default: nil
        }
    }

    /// The body as one item, when it is a JSON object.
    var item: Item? { json?.objectValue }

    /// The ids of a page's rows, in order.
    func rowIds(_ dialect: TableProtocol) -> [String] {
        (rows(dialect) ?? []).compactMap { $0["id"]?.stringValue }
    }

    /// The answer's header lines, `Name: value`.
    var responseHeaderLines: [String] {
        responseHeaders.split(separator: "\n").map(String.init)
    }
}
