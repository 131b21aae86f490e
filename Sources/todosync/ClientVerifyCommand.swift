import ArgumentParser
import Foundation
import SyncClient

/// `client verify`: compares the local table with the service; exit status 3 on a silent divergence.
struct ClientVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Compare the local table (--table) with the service, row by row, and say why each row differs.",
        discussion: """
            Reads both sides by id, version and updatedAt (the service's deleted rows included) and lists each row \
            that differs with its reason: a queued change, a conflict, a change on the service not pulled yet — or \
            none, a silent divergence (listed first). Nothing local is changed. Exit status: 0 when every \
            difference has a reason, 3 when one has none, 1 on an error. Ctrl-C stops it.
            """)

    /// The exit status when a row differs for no reason.
    static let silentDivergence = ExitCode(3)

    @OptionGroup var options: ClientSubcommandOptions
    @Option(help: "Rows asked of the service per request (1 to 10,000).") var pageSize = 1000

    func validate() throws {
        guard (1...10_000).contains(pageSize) else {
            throw ValidationError("--page-size must be from 1 to 10000, not \(pageSize).")
        }
    }

    func run() async throws {
        var silent = false
        try await options.run { context in
            let report = try await context.verify(options.table, pageSize: pageSize)
            silent = !report.silentDivergences.isEmpty
            var lines = [report.summary]
            for difference in report.differences {
                lines.append(
                    "  \(difference.id): \(difference.kind.rawValue)"
                        + (difference.columns.isEmpty ? "" : " (\(difference.columns.joined(separator: ", ")))")
                        + " — \(difference.reason.label)"
                        + "  (local \(difference.localVersion ?? "—"), service \(difference.serviceVersion ?? "—"))")
            }
            options.output(lines.joined(separator: "\n"), json: report)
        }
        if silent { throw Self.silentDivergence }
    }
}
