import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol
import UnixSignals

/// `client watch [--only-table --table T] [--live auto|on|off] [--every S]`: pulls as the remote's
/// change channel announces changes (or every S seconds without one), printing a line per row
/// applied, until Ctrl-C (or SIGTERM).
struct ClientWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Pull as the service announces changes, printing a line per row applied, until Ctrl-C.",
        discussion: """
            Follows the remote's change channel (todosync serve has one); a remote without one (the official \
            servers) is polled every --every seconds, unless --live on. Without --only-table it watches every \
            synced table.
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Flag(help: "Watch only the table given with --table (default: every synced table).") var onlyTable = false
    @Option(
        help: ArgumentHelp(
            "auto: follow the change channel, or poll without one; on: a remote without one is an error; off: poll.",
            valueName: "auto|on|off"))
    var live: LiveMode = .auto
    @Option(help: ArgumentHelp("Seconds between polls without the change channel (1 to 86400).", valueName: "seconds"))
    var every = 10

    func validate() throws {
        guard (1...86_400).contains(every) else { throw ValidationError("--every must be from 1 to 86400 seconds.") }
    }

    /// The incremental pull of the watch, apart from the others' (`client pull --query-id`).
    static let queryId = "todosync-watch"

    func run() async throws {
        try await options.run { context in
            let tables = onlyTable ? [options.table] : try context.syncedTables()
            announce(
                "Watching \(tables.joined(separator: ", "))"
                    + (live == .off ? " every \(every) s" : " on the service's change channel") + "; Ctrl-C stops.")
            let end = await Self.watch(context, tables: tables, live: live, every: every)
            if case .signInRefused? = end {
                FileHandle.standardError.write(
                    Data("error: the service refused the sign-in; give a fresh token with --auth-token.\n".utf8))
                throw ExitCode.failure
            }
            if case .notOffered(let status)? = end {
                FileHandle.standardError.write(
                    Data(
                        "error: the service has no change channel (it answered \(status)); use client pull instead.\n"
                            .utf8))
                throw ExitCode.failure
            }
        }
    }

    /// Follows (or polls) every table until a signal; a follower's end when it ended by itself
    /// (only with `--live on`: with auto, a table without the channel is polled).
    private static func watch(_ context: SyncContext, tables: [String], live: LiveMode, every: Int) async -> FollowEnd?
    {
        let signals = await trapTerminationSignals()
        return await withTaskGroup(of: FollowEnd?.self) { group in
            group.addTask {
                for await _ in signals { return nil }
                return nil
            }
            for table in tables {
                group.addTask {
                    if live != .off {
                        let end = await context.followChanges(of: table) { await pullAndPrint(context, table: table) }
                        guard case .notOffered = end, live == .auto else { return end }
                        announce("\(table): the service has no change channel; polling every \(every) s.")
                    }
                    repeat {
                        await pullAndPrint(context, table: table)
                    } while (try? await Task.sleep(for: .seconds(every))) != nil
                    return .cancelled
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private static func pullAndPrint(_ context: SyncContext, table: String) async {
        do {
            let result = try await context.table(table).pull(queryId: queryId)
            guard result.written > 0 else { return }
            // The rows just written are the newest by the service's clock.
            let rows = try context.table(table).query(
                TableQuery(orderBy: [.descending("updatedAt")], limit: result.written))
            let description = try context.description(of: table)
            for row in rows.reversed() { announce("\(table)  \(describe(row, in: description))") }
            if result.deleted > 0 { announce("\(table)  \(result.deleted) deleted") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        }
    }
}
