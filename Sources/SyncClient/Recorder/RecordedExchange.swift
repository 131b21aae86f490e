import Foundation
import SyncProtocol

/// What an exchange with the service was for.
public enum ExchangePurpose: Sendable, Hashable, Codable {
    /// Sending queued operation `operationId` (a change of `itemId` in `table`).
    case push(operationId: Int64, table: String, itemId: String)
    /// Page `page` (1 for the first) of a pull of `table`, for query id `queryId` (nil: not incremental).
    case pull(table: String, queryId: String?, page: Int)
    /// Page `page` of the service's rows read by a verify of `table`.
    case verify(table: String, page: Int)
    /// Asking the service which table protocol it speaks, with one row of `table`.
    case protocolProbe(table: String)
    /// Asking whether the service answers again (no rows of `table`), while auto-sync backs off.
    case reachability(table: String)
    /// A probe of the protocol doctor on `table` (never recorded: a doctor run writes no store).
    case doctor(table: String)
    /// Uploading this device's support bundle, which the service's admin asked for.
    case supportBundle
    /// A revoked device's deposit of its queued changes in the service's escrow (`page`: which batch).
    case escrow(page: Int)
    /// A revoked device's receipt of its wipe.
    case wipeReceipt
    /// Asking which epoch of its data the service answers from (``ServiceEpoch``), with `table`.
    case epochProbe(table: String)
    /// Page `page` of the service's rows read to reconcile `table` after the service went back in time.
    case reconcile(table: String, page: Int)

    /// The table it concerns ("" for the support bundle).
    public var table: String {
        switch self {
        case .push(_, let table, _), .pull(let table, _, _), .verify(let table, _), .protocolProbe(let table),
            .reachability(let table), .doctor(let table), .epochProbe(let table), .reconcile(let table, _):
            table
        case .supportBundle, .escrow, .wipeReceipt: ""
        }
    }

    /// "push of operation 12 (todoitem a1)", "pull of todoitem, page 3 (query id all)".
    public var description: String {
        switch self {
        case .push(let operationId, let table, let itemId):
            "push of operation \(operationId) (\(table) \(itemId))"
        case .pull(let table, let queryId, let page):
            "pull of \(table), page \(page)" + (queryId.map { " (query id \($0))" } ?? "")
        case .verify(let table, let page): "verify of \(table), page \(page)"
        case .protocolProbe(let table): "which protocol the service speaks (asked with \(table))"
        case .reachability(let table): "whether the service answers again (asked with \(table))"
        case .doctor(let table): "protocol doctor on \(table)"
        case .supportBundle: "the support bundle the service asked for"
        case .escrow(let page): "deposit of unsynced changes in the service's escrow (access revoked), batch \(page)"
        case .wipeReceipt: "receipt of the wipe the service's admin asked for"
        case .epochProbe(let table): "which epoch of its data the service answers from (asked with \(table))"
        case .reconcile(let table, let page): "reconcile of \(table) after a restore of the service, page \(page)"
        }
    }
}

/// One request the client made and what came back: what the transport hands the flight recorder,
/// what the recorder keeps (`__exchanges`, ``ExchangeRecord``) and what a doctor check shows.
/// Secrets are replaced by `[redacted]` (see ``Redaction``; the doctor writes its own request
/// headers with the secrets left out) and each body is cut at ``maximumBody`` bytes.
public struct RecordedExchange: Sendable, Hashable, Codable, Identifiable {
    /// Bodies are kept up to this many bytes each.
    public static let maximumBody = 8 * 1024

    /// Its place in the recorder: later exchanges have larger numbers (0 until stored, and for a
    /// doctor's exchange, which is never stored).
    public var id: Int64
    /// When the request was sent.
    public var startedAt: Date
    /// How long it took, to the last byte of the answer or the failure, in milliseconds.
    public var milliseconds: Double
    /// The method, as sent.
    public var method: String
    /// The path and query, as sent: `/tables/todoitem?$top=1`.
    public var target: String
    /// What the exchange was for.
    public var purpose: ExchangePurpose
    /// The answer's status; nil when no answer came (see ``failure``).
    public var status: Int?
    /// Why no answer came (unreachable, a deadline...), as the sync reported it.
    public var failure: String?
    /// Body bytes sent and received (the whole bodies, not only the kept part).
    public var bytesSent: Int
    public var bytesReceived: Int
    /// The request's and the answer's headers, one `Name: value` per line.
    public var requestHeaders: String
    public var responseHeaders: String
    /// The bodies, up to ``maximumBody`` bytes each (nil: none).
    public var requestBody: String?
    public var responseBody: String?
    /// The whole answer's body as JSON, when it is JSON and a doctor check judges it (never kept).
    var json: JSONValue? = nil

    private enum CodingKeys: String, CodingKey {
        case id, startedAt, milliseconds, method, target, purpose, status, failure, bytesSent, bytesReceived
        case requestHeaders, responseHeaders, requestBody, responseBody
    }

    /// "200", "412", or "no answer".
    public var outcome: String {
        status.map(String.init) ?? "no answer"
    }

    /// "GET /tables/todoitem?$top=1".
    public var requestLine: String { method + " " + target }

    /// "HTTP 412" or "no answer: ...".
    public var answerLine: String {
        if let status { "HTTP \(status)" } else { "no answer: " + (failure ?? "") }
    }

    /// The milliseconds from `instant` to now.
    static func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - instant
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// The bytes of `body` redaction and the cut need, copied so that a large answer is not kept alive.
    static func kept(_ body: Data?) -> Data? {
        guard let body, !body.isEmpty else { return nil }
        return Data(Array(body.prefix(maximumBody + Redaction.lookAhead)))
    }
}

/// Which recorded exchanges to list: filters and a keyset cursor, newest first.
public struct ExchangeQuery: Sendable, Hashable {
    /// A status (`412`), a class of statuses (`4xx`), or `failed` (no answer).
    public var status: String?
    /// Only exchanges for this table.
    public var table: String?
    /// Only exchanges for this item (pushes of its operations, and pull pages whose answer names it).
    public var itemId: String?
    /// Only exchanges older than this id (the previous page's ``ExchangePage/next``).
    public var before: Int64?
    /// Exchanges per page, 1 to 500.
    public var limit: Int

    /// A query; `limit` is clamped to 1...500 and empty filters are none.
    public init(
        status: String? = nil, table: String? = nil, itemId: String? = nil, before: Int64? = nil, limit: Int = 50
    ) {
        self.status = status.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        self.table = table.flatMap { $0.isEmpty ? nil : $0 }
        self.itemId = itemId.flatMap { $0.isEmpty ? nil : $0 }
        self.before = before
        self.limit = min(500, max(1, limit))
    }

    /// Whether `status` is a filter the recorder understands: `200`, `4xx` or `failed`.
    public static func isValidStatus(_ text: String) -> Bool {
        let text = text.lowercased()
        if text == "failed" { return true }
        guard text.count == 3, let first = text.first, ("1"..."5").contains(first) else { return false }
        return text.dropFirst().allSatisfy(\.isNumber) || text.dropFirst() == "xx"
    }
}

/// A page of recorded exchanges, newest first.
public struct ExchangePage: Sendable, Hashable, Codable {
    /// The exchanges, newest first.
    public var exchanges: [RecordedExchange]
    /// The `before` of the next (older) page; nil on the last page.
    public var next: Int64?
}
