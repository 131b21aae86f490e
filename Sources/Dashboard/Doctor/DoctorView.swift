import SyncClient

/// The Doctor page's form (`/doctor`).
struct DoctorFormPage: Encodable, Sendable {
    var url: String
    var table: String
    var readOnly: Bool
    var urlError: String?
    var tableError: String?
    /// Earlier runs, newest first.
    var runs: [RunLink]
    /// Whether there are earlier runs.
    var hasRuns = false

    struct RunLink: Encodable, Sendable {
        var href: String
        var label: String
    }
}

/// A doctor run's page (`/doctor/runs/{n}`): its checks so far, green or red, with the exact
/// exchanges of each red one. Bodies are shown as text, escaped by the template.
struct DoctorRunPage: Encodable, Sendable {
    var number: Int
    var url: String
    var table: String
    var readOnly: Bool
    var running: Bool
    var summary: String?
    var stopped: String?
    var results: [Result]
    var cancelURL: String

    struct Result: Encodable, Sendable {
        var name: String
        var asks: String
        var tone: String
        var label: String
        var explanation: String
        var exchanges: [Exchange]
        var hasExchanges: Bool
    }

    struct Exchange: Encodable, Sendable {
        var requestLine: String
        var requestHeaders: String
        var requestBody: String?
        var answerLine: String
        var responseHeaders: String
        var responseBody: String?
    }

    init(_ run: DoctorRuns.Run) {
        number = run.number
        url = run.options.url.absoluteString
        table = run.options.table
        readOnly = run.options.readOnly
        running = run.report == nil
        summary = run.report?.summary
        stopped = run.report?.stopped
        cancelURL = "/doctor/runs/\(run.number)/cancel"
        results = (run.report?.results ?? run.results).map { result in
            let exchanges =
                result.verdict.outcome == .failed
                ? result.exchanges.map { exchange in
                    Exchange(
                        requestLine: exchange.requestLine,
                        requestHeaders: exchange.requestHeaders,
                        requestBody: exchange.requestBody, answerLine: exchange.answerLine,
                        responseHeaders: exchange.responseHeaders, responseBody: exchange.responseBody)
                } : []
            let (tone, label) =
                switch result.verdict.outcome {
                case .passed: ("ok", "green")
                case .failed: ("failed", "red")
                case .skipped: ("pending", "not run")
                }
            return Result(
                name: result.name, asks: result.asks, tone: tone, label: label,
                explanation: result.verdict.explanation, exchanges: exchanges, hasExchanges: !exchanges.isEmpty)
        }
    }
}
