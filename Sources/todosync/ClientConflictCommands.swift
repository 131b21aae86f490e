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
    var deletedOnServer: Bool
    var fields: [SyncConflict.Field]

    init(_ conflict: SyncConflict) {
        operation = conflict.id
        table = conflict.operation.table
        item = conflict.operation.itemId
        kind = conflict.operation.kind.rawValue
        reason = conflict.error.message
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

    @ParentCommand var client: ClientCommand
    @OptionGroup var output: OutputOptions
    var options: ClientOptions { client.options.with(output) }

    func run() async throws {
        try await options.run { context in
            let conflicts = try context.conflicts().map(ConflictOutput.init)
            if options.json {
                options.printJSON(conflicts)
                return
            }
            for conflict in conflicts { print(conflict.line) }
            print("\(conflicts.count) conflict\(conflicts.count == 1 ? "" : "s")")
        }
    }
}

extension ConflictResolution: ExpressibleByArgument {}

/// `client resolve OP use-client|use-server|cancel`.
struct ClientResolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Resolve one conflict.")

    @ParentCommand var client: ClientCommand
    @OptionGroup var output: OutputOptions
    var options: ClientOptions { client.options.with(output) }
    @Argument(help: "The operation number, as listed by `conflicts`.") var operation: Int64
    @Argument(help: "use-client, use-server or cancel.") var resolution: ConflictResolution

    func run() async throws {
        try await options.run { context in
            let outcome = try await context.resolve(operation, with: resolution)
            let summary: String
            switch (resolution, outcome) {
            case (.useClient, .pushed?): summary = "Pushed your version of #\(operation)"
            case (.useClient, .conflict?): summary = "The server changed again: #\(operation) is a new conflict"
            case (.useClient, let other): summary = "#\(operation): \(other?.rawValue ?? "done")"
            case (.useServer, _): summary = "Kept the server's version; #\(operation) dropped"
            case (.cancel, _): summary = "#\(operation) is pending again"
            }
            options.output(
                summary + " — \(context.pendingSummary())",
                json: [
                    "operation": "\(operation)", "resolution": resolution.rawValue, "outcome": outcome?.rawValue ?? "",
                ])
        }
    }
}
