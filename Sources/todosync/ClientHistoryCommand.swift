import ArgumentParser
import Foundation
import SyncClient

/// `client history ID`: why a row is as it is, then every kept event that touched it.
struct ClientHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Say why a row of the table (--table) is as it is, then list every event that touched it.",
        discussion: """
            Events, oldest first: local edits (with the values they set) and how they joined the queue, pushes \
            (with the versions before and after), answers that never came, refusals, conflicts, decisions (who \
            or which policy, from the journal), the pull pages that brought the row (with the delta token before \
            and after), purges, token resets and remote switches. Reads the store only; needs no service.
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The row's id.") var id: String

    func run() async throws {
        try await options.run { context in
            let history = try context.table(options.table).history(id: id)
            var lines = [history.explanation]
            if history.events.isEmpty { lines.append("(no kept event touched this row)") }
            let formatter = ISO8601DateFormatter()
            for event in history.events {
                let when = formatter.string(from: event.recordedAt)
                lines.append("  \(when)  \(event.title)" + (event.summary.isEmpty ? "" : " — \(event.summary)"))
            }
            options.output(lines.joined(separator: "\n"), json: history)
        }
    }
}
