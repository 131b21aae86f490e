import ArgumentParser
import Foundation
import SyncClient

/// `client log`: the flight recorder's exchanges with the service, newest first.
struct ClientLog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List the recorded exchanges with the service, newest first (JSON Lines with --json).",
        discussion: """
            Every request a push or pull made is recorded with its status, sizes, duration and bodies (up to 8 KB \
            each); the application key, sign-in token, cookies and JWT-looking values are stored as [redacted].
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Option(help: "Only this status (412), class of statuses (4xx), or failed (no answer).") var status: String?
    @Option(help: "Only exchanges about this item id (its pushes, and pull pages that brought it).") var item: String?
    @Flag(help: "Exchanges of every table, not only --table's.") var allTables = false
    @Flag(help: "Print each exchange's headers and bodies too.") var bodies = false
    @Option(help: "At most this many exchanges (newest first).") var limit = 100
    @Option(help: "From now on keep only the newest N exchanges (5,000 unless changed).") var keep: Int?

    func validate() throws {
        if let status, !ExchangeQuery.isValidStatus(status) {
            throw ValidationError("--status takes a status (412), a class (4xx) or failed, not \"\(status)\".")
        }
        if let keep, keep < 1 { throw ValidationError("--keep needs a number of exchanges of at least 1.") }
        if limit < 1 { throw ValidationError("--limit needs a number of at least 1.") }
    }

    func run() async throws {
        try await options.run { context in
            if let keep { try await context.setRetention(of: .exchanges, to: keep) }
            let query = ExchangeQuery(
                status: status, table: allTables ? nil : options.table, itemId: item, limit: min(limit, 500))
            try printNewestFirst(limit: limit, json: options.json) { before in
                var paged = query
                paged.before = before
                let page = try context.exchanges(paged)
                return (page.exchanges, page.next)
            } text: {
                ExchangeLine($0, bodies: bodies).text
            }
        }
    }
}

/// One recorded exchange as a line (and, with bodies, the headers and bodies below it).
struct ExchangeLine {
    let exchange: RecordedExchange
    let bodies: Bool

    init(_ exchange: RecordedExchange, bodies: Bool) {
        self.exchange = exchange
        self.bodies = bodies
    }

    var text: String {
        let when = ISO8601DateFormatter().string(from: exchange.startedAt)
        var line =
            "#\(exchange.id)  \(when)  \(exchange.method) \(exchange.target.removingPercentEncoding ?? exchange.target)  "
            + "\(exchange.outcome)  "
            + String(format: "%.1f ms", exchange.milliseconds)
            + "  sent \(exchange.bytesSent) B, received \(exchange.bytesReceived) B  \(exchange.purpose.description)"
        if let failure = exchange.failure { line += "\n    \(failure)" }
        guard bodies else { return line }
        for (label, text) in [
            ("request headers", exchange.requestHeaders), ("request body", exchange.requestBody ?? ""),
            ("response headers", exchange.responseHeaders), ("response body", exchange.responseBody ?? ""),
        ] where !text.isEmpty {
            line +=
                "\n    \(label):\n"
                + text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "      " + $0 }.joined(separator: "\n")
        }
        return line
    }
}
