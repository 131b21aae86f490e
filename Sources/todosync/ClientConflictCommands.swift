import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol

/// One conflict as printed by `conflicts` and `push`.
struct ConflictOutput: Encodable {
    var operation: Int64
    var table: String
    var item: String
    var kind: String
    var reason: String
    /// `conflict`, `deletedOnServer`, `gone-from-service` or `restored-older` (a restore of the service).
    var cause: String
    var deletedOnServer: Bool
    var fields: [SyncConflict.Field]

    init(_ conflict: SyncConflict) {
        operation = conflict.id
        table = conflict.operation.table
        item = conflict.operation.itemId
        kind = conflict.operation.kind.rawValue
        reason = conflict.error.message
        cause = conflict.error.kind.rawValue
        deletedOnServer = conflict.deletedOnServer
        fields = conflict.fields(columns: ["text", "complete"])
    }

    var line: String {
        var text = "conflict #\(operation) \(kind) \(table)/\(item): \(reason)"
        for field in fields where field.differs && field.name != "updatedAt" {
            text +=
                "\n    \(field.name): client \(field.client?.description ?? "—"), server \(field.server?.description ?? "—")"
        }
        return text
    }
}

/// `client conflicts`.
struct ClientConflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "conflicts", abstract: "List the conflicts.")

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        try await options.run { context in
            let conflicts = try context.conflicts.all().map(ConflictOutput.init)
            if options.json {
                options.printJSON(conflicts)
                return
            }
            for conflict in conflicts { print(conflict.line) }
            print("\(conflicts.count) conflict\(conflicts.count == 1 ? "" : "s")")
        }
    }
}

/// What `client resolve` does: one of the three buttons, or a per-field pick.
enum ResolveChoice: String, CaseIterable, ExpressibleByArgument {
    case useClient = "use-client"
    case useServer = "use-server"
    case cancel
    case pick
}

extension ConflictSide: ExpressibleByArgument {}

/// `client resolve OP use-client|use-server|cancel`, or `client resolve OP pick --field text=client ...`.
struct ClientResolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Resolve one conflict.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The operation number, as listed by `conflicts`.") var operation: Int64
    @Argument(help: "use-client, use-server, cancel or pick.") var choice: ResolveChoice
    @Option(
        name: .customLong("field"),
        help: "With pick: FIELD=client|server|base for each field changed on both sides (repeat the option).")
    var fields: [String] = []

    func validate() throws {
        if choice != .pick, !fields.isEmpty { throw ValidationError("--field goes with pick only.") }
        _ = try picks()
    }

    /// `--field text=client` as a dictionary.
    func picks() throws -> [String: ConflictSide] {
        var picks: [String: ConflictSide] = [:]
        for field in fields {
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let side = ConflictSide(rawValue: parts[1]), !parts[0].isEmpty else {
                throw ValidationError("--field '\(field)' should read FIELD=client, FIELD=server or FIELD=base.")
            }
            picks[parts[0]] = side
        }
        return picks
    }

    func run() async throws {
        try await options.run { context in
            let outcome: OperationOutcome?
            switch choice {
            case .useClient: outcome = try await context.conflicts.resolve(operation, with: .useClient)
            case .useServer: outcome = try await context.conflicts.resolve(operation, with: .useServer)
            case .cancel: outcome = try await context.conflicts.resolve(operation, with: .cancel)
            case .pick: outcome = try await context.conflicts.resolve(operation, picking: try picks())
            }
            let summary: String
            switch (choice, outcome) {
            case (.useClient, .pushed?): summary = "Pushed your version of #\(operation)"
            case (.pick, .pushed?): summary = "Pushed the picked values of #\(operation)"
            case (.useClient, .conflict?), (.pick, .conflict?):
                summary = "The server changed again: #\(operation) is a new conflict"
            case (.useClient, let other), (.pick, let other):
                summary = "#\(operation): \(other?.rawValue ?? "done")"
            case (.useServer, _): summary = "Kept the server's version; #\(operation) dropped"
            case (.cancel, _): summary = "#\(operation) is pending again"
            }
            options.output(
                summary + " — \(pendingSummary(of: context))",
                json: [
                    "operation": "\(operation)", "resolution": choice.rawValue, "outcome": outcome?.rawValue ?? "",
                ])
        }
    }
}
