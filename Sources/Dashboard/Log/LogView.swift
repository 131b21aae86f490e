import Foundation
import HTTPServer
import SyncClient

/// The `/log` page's content: one page of recorded exchanges, newest first, with its filters.
struct LogView: Encodable, Sendable {
    var exchanges: [Exchange]
    var hasExchanges: Bool
    /// The filters as typed, to show them back in the form.
    var status: String?
    var item: String?
    var tables: [Option]
    var filtered: Bool
    /// How many exchanges the recorder keeps ("5,000").
    var retention: String
    /// The older page, when there is one; the newest page, when this is not it.
    var olderURL: String?
    var newestURL: String?

    /// One choice of the table filter.
    struct Option: Encodable, Sendable {
        var value: String
        var selected: Bool
    }

    /// One exchange.
    struct Exchange: Encodable, Sendable {
        var id: Int64
        var when: String
        var method: String
        /// The path and query, percent-decoded to be read.
        var target: String
        var outcome: String
        /// `ok`, `refused` (4xx), `failed` (5xx or no answer): how the status is coloured.
        var tone: String
        var duration: String
        var sizes: String
        var purpose: String
        /// The item the exchange was about (a push), linked to its editor when it is a todo.
        var itemId: String?
        var itemURL: String?
        var failure: String?
        var requestHeaders: String
        var requestBody: String?
        var responseHeaders: String
        var responseBody: String?
    }
}

extension LogView.Exchange {
    init(_ exchange: RecordedExchange) {
        id = exchange.id
        when = Display.date(exchange.startedAt)
        method = exchange.method
        target = exchange.target.removingPercentEncoding ?? exchange.target
        outcome = exchange.outcome
        tone =
            switch exchange.status {
            case (200..<400)?: "ok"
            case (400..<500)?: "refused"
            default: "failed"
            }
        duration = String(format: "%.1f ms", exchange.milliseconds)
        sizes = "\(exchange.bytesSent.formatted()) B sent, \(exchange.bytesReceived.formatted()) B received"
        purpose = exchange.purpose.description
        if case .push(_, let table, let item) = exchange.purpose {
            itemId = item
            itemURL = TablePreset.href(table, item)
        }
        failure = exchange.failure
        requestHeaders = exchange.requestHeaders
        requestBody = exchange.requestBody
        responseHeaders = exchange.responseHeaders
        responseBody = exchange.responseBody
    }
}
