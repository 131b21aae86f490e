import ArgumentParser
import Dashboard
import Foundation
import SyncClient
import SyncProtocol
import UnixSignals

/// `todosync doctor URL`: probes a table service and prints a green or red line per check.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract:
            "Check that a Mobile Apps (v2) or Datasync (v3) endpoint speaks the table protocol as todosync needs.",
        discussion: """
            Prints a green or red line per check (protocol versions, paging and its end, $filter, answers about \
            the item asked, timestamp precision, If-Match → 412, duplicate id → 409, soft delete), with the exact \
            request and answer of each red one. Rows written have ids starting with a unique "doctor-" prefix and \
            are deleted afterwards; --read-only sends only GETs. Nothing local is written. Exit status: 0 all \
            green, 3 when a check is red, 1 when the run could not finish (unreachable, too slow). Ctrl-C stops it.
            """)

    /// The exit status when a check is red.
    static let red = ExitCode(3)

    @Argument(help: "The service's base URL, e.g. http://127.0.0.1:8090.") var url: String
    @Option(help: "The table to probe.") var table = "todoitem"
    @Option(name: .customLong("app-key"), help: "The application key (X-ZUMO-APPLICATION).") var appKey: String?
    @Option(help: "A signed-in user's token, sent as --auth-style says (never shown).") var authToken: String?
    @Option(
        help: ArgumentHelp(
            "How the token is sent: zumo (X-ZUMO-AUTH) or bearer (Authorization: Bearer); at first as each "
                + "protocol's clients send it."))
    var authStyle: AuthStyle?
    @Option(help: TokenCommand.help) var authTokenCommand: String?
    @Option(name: .customLong("protocol"), help: "auto (v2 when answered, else v3), v2 or v3.")
    var protocolChoice = ProtocolChoice.auto
    @Flag(name: .customLong("read-only"), help: "Send only GETs: the checks that write are not run.")
    var readOnly = false
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var trust: TransportSecurityOptions

    func validate() throws {
        _ = try RemoteAddress.option(url, "URL")
        try TokenCommand.validate(authTokenCommand, besides: authToken)
    }

    func run() async throws {
        var options = ProtocolDoctor.Options(
            url: try RemoteAddress.option(url, "URL").url, table: table, applicationKey: appKey, readOnly: readOnly,
            protocolChoice: protocolChoice)
        options.authToken = authToken
        options.authStyle = authStyle
        options.authTokenCommand = authTokenCommand.map { TokenCommand($0) }
        options.caFile = trust.caFile
        options.allowPlainHTTP = trust.allowPlainHttp
        let doctor = ProtocolDoctor(options)
        let json = json
        // Trapped before the first request, so that a signal always cancels instead of killing.
        let signals = await trapTerminationSignals()
        // The checks, and a watch that cancels them at the first signal.
        let report = await withTaskGroup(of: DoctorReport?.self) { group in
            group.addTask {
                await doctor.run { result in
                    if !json { print(Self.line(result)) }
                }
            }
            group.addTask {
                for await _ in signals { break }
                return nil  // a signal
            }
            // The first to end: the report, or a signal, which cancels the checks (they then report
            // what they did).
            var report = await group.next() ?? nil
            group.cancelAll()
            if report == nil { report = await group.next() ?? nil }
            return report!
        }
        if json {
            print(String(decoding: try JSONEncoder.todosync(pretty: true).encode(report), as: UTF8.self))
        } else {
            print(report.summary)
        }
        if report.cancelled {
            FileHandle.standardError.write(Data("Cancelled\n".utf8))
            return
        }
        if report.stopped != nil { throw ExitCode.failure }
        if !report.failures.isEmpty { throw Self.red }
    }

    /// `text` with control characters (a terminal's escape sequences among them) written as `\u{1B}`:
    /// a service's answer is shown, never obeyed by the terminal.
    static func visible(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" || !(scalar.properties.generalCategory == .control) {
                shown.unicodeScalars.append(scalar)
            } else {
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return shown
    }

    /// "✓ paging — ..." in green, or "✗ ..." in red followed by the request and answer of each exchange.
    static func line(_ result: DoctorResult) -> String {
        let color = isatty(STDOUT_FILENO) == 1
        switch result.verdict.outcome {
        case .passed:
            return (color ? "\u{1B}[32m✓\u{1B}[0m " : "✓ ") + result.name + " — " + visible(result.verdict.explanation)
        case .skipped:
            return "- " + result.name + " — " + visible(result.verdict.explanation)
        case .failed:
            var lines = [
                (color ? "\u{1B}[31m✗\u{1B}[0m " : "✗ ") + result.name + " — " + visible(result.verdict.explanation)
            ]
            for exchange in result.exchanges {
                lines.append("    > " + exchange.requestLine)
                lines += exchange.requestHeaders.split(separator: "\n").map { "    > " + $0 }
                if let body = exchange.requestBody { lines.append("    > " + body) }
                lines.append("    < " + exchange.answerLine)
                lines += exchange.responseHeaders.split(separator: "\n").map { "    < " + visible(String($0)) }
                if let body = exchange.responseBody { lines.append("    < " + visible(body)) }
            }
            return lines.joined(separator: "\n")
        }
    }
}
