import ArgumentParser
import Foundation
import SyncClient

/// `client tokens [reset]`: the incremental pulls' delta tokens, and resetting them.
struct ClientTokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "List the delta tokens of incremental pulls, or reset those of --table (`tokens reset`).",
        discussion: """
            Each incremental pull (a query id) keeps where it stands: the last row it received. `tokens reset` \
            forgets the tokens of --table (or of --query-id only), so that the next pull reads every row again; \
            queued changes, conflicts and the journal are kept, and no row is duplicated.
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable { case reset }

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "reset: forget the tokens of --table (omit to list every token).") var action: Action?
    @Option(help: "With reset: only this query id's token.") var queryId: String?

    func validate() throws {
        if queryId != nil, action == nil { throw ValidationError("--query-id goes with `tokens reset`.") }
    }

    func run() async throws {
        try await options.run { context in
            if action == .reset {
                let before = try context.deltaTokens().filter {
                    $0.table == options.table && (queryId == nil || $0.queryId == queryId)
                }
                try await context.resetDeltaTokens(table: options.table, queryId: queryId)
                let names = before.map { "\($0.table)/\($0.queryId)" }
                options.output(
                    before.isEmpty
                        ? "No token of \(options.table)\(queryId.map { " for query id \($0)" } ?? "") to reset."
                        : "Reset \(names.joined(separator: ", ")): the next pull reads every row again; "
                            + pendingSummary(of: context),
                    json: ["reset": names])
                return
            }
            let tokens = try context.deltaTokens()
            let lines =
                tokens.isEmpty
                ? ["No incremental pull yet (pull --query-id Q keeps a token)."]
                : tokens.map { token in
                    let cursor = token.updatedAt.map { "\($0) \(token.id ?? "")" } ?? "(nothing received yet)"
                    let moved = token.movedAt.map { ISO8601DateFormatter().string(from: $0) } ?? "never"
                    return
                        "\(token.table)/\(token.queryId)  at \(cursor)  moved \(moved)  \(token.rows) row\(token.rows == 1 ? "" : "s") brought"
                }
            options.output(lines.joined(separator: "\n"), json: tokens)
        }
    }
}
