import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol

/// `client add TEXT [--id ID]`.
struct ClientAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an item locally.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The item's text.") var text: String
    @Option(help: "The item's id (a UUID is made when omitted).") var id: String?

    func run() async throws {
        try await options.run { context in
            var item: Item = ["text": .string(text), "complete": false]
            if let id { item["id"] = .string(id) }
            let stored = try context.table(options.table).insert(item)
            options.output(
                "Added \(stored["id"]?.stringValue ?? "") locally — \(context.pendingSummary())", json: stored)
        }
    }
}

/// `client edit ID [--text T] [--complete true|false]`.
struct ClientEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change an item locally.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The item's id.") var id: String
    @Option(help: "New text.") var text: String?
    @Option(help: "true or false.") var complete: Bool?

    func validate() throws {
        if text == nil && complete == nil { throw ValidationError("Give --text and/or --complete.") }
    }

    func run() async throws {
        try await options.run { context in
            var item: Item = ["id": .string(id)]
            if let text { item["text"] = .string(text) }
            if let complete { item["complete"] = .bool(complete) }
            let table = context.table(options.table)
            guard try table.item(id: id) != nil else { throw SyncError.itemNotFound(table: options.table, id: id) }
            let stored = try table.update(item)
            options.output("Saved \(id) locally — \(context.pendingSummary())", json: stored)
        }
    }
}

/// `client delete ID`.
struct ClientDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an item locally.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The item's id.") var id: String

    func run() async throws {
        try await options.run { context in
            try context.table(options.table).delete(id: id)
            options.output("Deleted \(id) locally — \(context.pendingSummary())", json: ["deleted": id])
        }
    }
}

/// `client list`.
struct ClientList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the local items.")

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        try await options.run { context in
            let items = try context.table(options.table).query(TableQuery(orderBy: [.ascending("updatedAt")]))
            let pending = Dictionary(
                try context.operations(table: options.table).map { ($0.itemId, $0) }, uniquingKeysWith: { $1 })
            if options.json {
                options.printJSON(items)
                return
            }
            for item in items {
                var line = describe(item)
                if let operation = item["id"]?.stringValue.flatMap({ pending[$0] }) {
                    line += "  (\(operation.kind.rawValue) \(operation.state.rawValue))"
                }
                print(line)
            }
            print("\(items.count) item\(items.count == 1 ? "" : "s"); \(context.pendingSummary())")
        }
    }
}
