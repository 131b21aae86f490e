import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol
import UnixSignals

/// `client watch [--table T]`: follows the remote's change channel and pulls as changes come,
/// printing a line per row applied, until Ctrl-C (or SIGTERM).
struct ClientWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Pull as the service announces changes, printing a line per row applied, until Ctrl-C.",
        discussion: """
            Needs a remote with a change channel (todosync serve has one). Without --table it watches \
            every synced table.
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Flag(help: "Watch only the table given with --table (default: every synced table).") var onlyTable = false

    /// The incremental pull of the watch, apart from the others' (`client pull --query-id`).
    static let queryId = "todosync-watch"

    func run() async throws {
        try await options.run { context in
            let tables = onlyTable ? [options.table] : try context.syncedTables()
            announce("Watching \(tables.joined(separator: ", ")) on the service's change channel; Ctrl-C stops.")
            let end = await Self.watch(context, tables: tables)
            if case .notOffered(let status)? = end {
                FileHandle.standardError.write(
                    Data(
                        "error: the service has no change channel (it answered \(status)); use client pull instead.\n"
                            .utf8))
                throw ExitCode.failure
            }
        }
    }

    /// Follows every table until a signal; the first follower's end when it ended by itself.
    private static func watch(_ context: SyncContext, tables: [String]) async -> FollowEnd? {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        return await withTaskGroup(of: FollowEnd?.self) { group in
            group.addTask {
                for await _ in signals { return nil }
                return nil
            }
            for table in tables {
                group.addTask {
                    await context.followChanges(of: table) { await pullAndPrint(context, table: table) }
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
