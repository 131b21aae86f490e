import Foundation
import SyncProtocol

/// One request of a doctor run and its answer, as shown for a red check: the exact request line,
/// the headers that matter, and both bodies (cut at ``maximumBody`` bytes). The application key is
/// never shown.
public struct DoctorExchange: Sendable, Hashable, Codable {
    /// Bodies are shown up to this many bytes.
    public static let maximumBody = 4096

    /// `GET`, `POST`...
    public var method: String
    /// The path and query as sent: `/tables/todoitem?$top=1`.
    public var target: String
    /// The protocol headers sent, one `Name: value` a line.
    public var requestHeaders: [String]
    /// The body sent, as text.
    public var requestBody: String?
    /// The answer's status code, nil when the exchange failed.
    public var status: Int?
    /// The answer's headers, one `Name: value` a line.
    public var responseHeaders: [String]
    /// The answer's body, as text (cut).
    public var responseBody: String
    /// Why the exchange failed, when it did.
    public var failure: String?
    /// The answer's body as JSON, when it is JSON.
    var json: JSONValue?

    private enum CodingKeys: String, CodingKey {
        case method, target, requestHeaders, requestBody, status, responseHeaders, responseBody, failure
    }

    /// "GET /tables/todoitem?$top=1".
    public var requestLine: String { method + " " + target }

    /// "HTTP 412" or "no answer: ...".
    public var answerLine: String {
        if let status { "HTTP \(status)" } else { "no answer: " + (failure ?? "") }
    }

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
}
