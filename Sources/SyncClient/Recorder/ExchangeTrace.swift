import Foundation
import HTTPTypes

/// An exchange as the transport saw it. It becomes a ``RecordedExchange`` (redacted, headers
/// written out, bodies cut) only when the recorder writes it, on the store's writer queue: none of
/// that work lies on the way of a request.
struct ExchangeTrace: Sendable {
    var startedAt: Date
    var milliseconds: Double
    var method: String
    var target: String
    var purpose: ExchangePurpose
    var status: Int?
    var failure: String?
    var requestFields: HTTPFields
    var responseFields: HTTPFields?
    /// The first bytes of each body (what redaction and the cut need), and each body's whole size.
    var requestBody: Data?
    var responseBody: Data?
    var bytesSent: Int
    var bytesReceived: Int
    var redaction: Redaction

    /// The bytes of `body` the recorder can use, copied so that a large answer is not kept alive.
    static func kept(_ body: Data?) -> Data? {
        guard let body, !body.isEmpty else { return nil }
        return Data(Array(body.prefix(RecordedExchange.maximumBody + Redaction.lookAhead)))
    }

    /// The exchange as the recorder keeps it.
    var recorded: RecordedExchange {
        RecordedExchange(
            id: 0, startedAt: startedAt, milliseconds: milliseconds, method: method, target: redaction.text(target),
            purpose: purpose, status: status, failure: failure, bytesSent: bytesSent, bytesReceived: bytesReceived,
            requestHeaders: redaction.headers(requestFields),
            responseHeaders: responseFields.map(redaction.headers) ?? "",
            requestBody: redaction.body(requestBody, whole: bytesSent, limit: RecordedExchange.maximumBody),
            responseBody: redaction.body(responseBody, whole: bytesReceived, limit: RecordedExchange.maximumBody))
    }
}
