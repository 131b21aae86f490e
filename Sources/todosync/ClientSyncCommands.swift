import ArgumentParser
import Dashboard
import Foundation
import SyncClient
import SyncProtocol

/// `client push`: exit status 0 also when conflicts remain (they are listed); 2 when the service
/// refused operations (they are listed, and stay queued as failed).
struct ClientPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Send the queued changes.",
        discussion: """
            Exit status: 0 when every change was sent or is waiting for a conflict resolution (listed), \
            2 when the service refused changes (listed; edit or discard them), 1 when the push stopped.
            """)

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        var refused = false
        try await options.run { context in
            let result = try await context.push()
            refused = !result.failed.isEmpty
            let conflicts = try context.conflicts.all()
            if options.json {
                options.printJSON(PushOutput(result: result, conflicts: conflicts.map(ConflictOutput.init)))
                return
            }
            print(JobOutcome.pushed(result).sentence)
            for conflict in conflicts { print(ConflictOutput(conflict).line) }
            for id in result.failed {
                if let operation = try context.operations.operation(id) {
                    print("failed #\(id) \(operation.kind.rawValue) \(operation.itemId): \(operation.message ?? "")")
                }
            }
        }
        if refused { throw ExitCode(2) }
    }
}

struct PushOutput: Encodable {
    var result: PushResult
    var conflicts: [ConflictOutput]
}

/// `client pull [--query-id ID] [--page-size N]`.
struct ClientPull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull", abstract: "Fetch the server's rows (pushes first when changes are pending).")

    @OptionGroup var options: ClientSubcommandOptions
    @Option(help: "Pull incrementally: only rows changed since the last pull with this id.") var queryId: String?
    @Option(help: "Rows per request, 1 to 1000.") var pageSize = 50

    func validate() throws {
        let range = DashboardConfiguration.pageSizeRange
        guard range.contains(pageSize) else {
            throw ValidationError("--page-size must be between \(range.lowerBound) and \(range.upperBound).")
        }
    }

    func run() async throws {
        try await options.run { context in
            let result = try await context.table(options.table).pull(
                queryId: queryId, settings: PullSettings(pageSize: pageSize))
            options.output(JobOutcome.pulled(result).sentence, json: result)
        }
    }
}

/// `client purge [--force]`.
struct ClientPurge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Remove the table's local rows (refused with pending changes).")

    @OptionGroup var options: ClientSubcommandOptions
    @Flag(help: "Also drop the table's pending changes, errors and delta tokens.") var force = false

    func run() async throws {
        try await options.run { context in
            let removed = try await context.table(options.table).purge(force: force)
            options.output(
                "Purged \(removed) row\(removed == 1 ? "" : "s") from \(options.table)", json: ["purged": removed])
        }
    }
}

/// `client status`.
struct ClientStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show queue counts and the last sync.")

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        try await options.run { context in
            let status = try context.status()
            var lines = [
                "\(status.pending) pending, \(status.conflicts) conflicts, \(status.failed) failed, \(status.held) held",
                "remote: \(status.remoteURL ?? "none")\(status.offline ? " (offline mode)" : "")",
                "protocol: \(status.tableProtocol.map { "\($0.rawValue) (\(context.protocolChoice.rawValue))" } ?? "not asked yet (auto)")",
                "sign-in token: \(context.authTokenHint?.description ?? "none")",
            ]
            if let last = status.lastSync {
                lines.append("last \(last.kind.rawValue): \(last.message) at \(last.finishedAt.formatted(.iso8601))")
            }
            if let revoked = status.revokedAccess { lines.append("access revoked: " + revoked.summary) }
            options.output(lines.joined(separator: "\n"), json: status)
        }
    }
}
