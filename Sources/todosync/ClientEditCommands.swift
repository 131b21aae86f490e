import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol

/// `client add [TEXT] [--id ID] [--field NAME=VALUE ...]`, or `client add --stdin` (one JSON object a line).
struct ClientAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add an item locally.",
        discussion: """
            todoitem: add "buy milk". Any table: add --field customer=ACME --field total=12.5 --field paid=false. \
            Values are read by the column's type; a field the table has no column for adds one. \
            Many at once: add --stdin, with one JSON object a line ({"text": "buy milk", "complete": false}), \
            stored in one transaction (all or none) and one sync of the disk.
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The item's text (its `text` column).") var text: String?
    @Option(help: "The item's id (a UUID is made when omitted).") var id: String?
    @Option(name: .customLong("field"), help: "A column's value, as NAME=VALUE (repeatable).")
    var fields: [String] = []
    @Flag(help: "Read the items from standard input, one JSON object a line, and add them all in one transaction.")
    var stdin = false

    func validate() throws {
        if stdin {
            if text != nil || id != nil || !fields.isEmpty {
                throw ValidationError("--stdin reads every item from standard input: give no TEXT, --id or --field.")
            }
        } else if text == nil && fields.isEmpty {
            throw ValidationError("Give the item's text and/or --field NAME=VALUE, or --stdin.")
        }
    }

    func run() async throws {
        if stdin { return try await addFromStandardInput() }
        try await options.run { context in
            try TableDescription.checkName(options.table)
            var item = try FieldAssignments(given: fields).item(for: try? context.description(of: options.table))
            if let text { item["text"] = .string(text) }
            if options.table == TableDescription.todoItem.name, item["complete"] == nil { item["complete"] = false }
            if let id { item["id"] = .string(id) }
            if (try? context.description(of: options.table)) == nil { try await context.describe(options.table) }
            let stored = try await context.table(options.table).insert(item)
            options.output(
                "Added \(stored["id"]?.stringValue ?? "") locally — \(pendingSummary(of: context))", json: stored)
        }
    }

    /// Every line of standard input as an item, then one insert of them all.
    private func addFromStandardInput() async throws {
        var items: [Item] = []
        var number = 0
        while let line = readLine(strippingNewline: true) {
            number += 1
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            guard var item = try? JSONDecoder().decode(Item.self, from: Data(line.utf8)) else {
                throw ValidationError("--stdin: line \(number) is not a JSON object. Nothing was added.")
            }
            if options.table == TableDescription.todoItem.name, item["complete"] == nil { item["complete"] = false }
            items.append(item)
        }
        try await options.run { context in
            try TableDescription.checkName(options.table)
            if (try? context.description(of: options.table)) == nil { try await context.describe(options.table) }
            let stored = try await context.table(options.table).insert(items)
            options.output("Added \(stored.count) locally — \(pendingSummary(of: context))", json: stored)
        }
    }
}

/// `client edit ID [--text T] [--complete true|false] [--field NAME=VALUE ...]`.
struct ClientEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change an item locally.",
        discussion: "Values are read by the column's type; a field the table has no column for adds one.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The item's id.") var id: String
    @Option(help: "New text.") var text: String?
    @Option(help: "true or false.") var complete: Bool?
    @Option(name: .customLong("field"), help: "A column's new value, as NAME=VALUE (repeatable).")
    var fields: [String] = []

    func validate() throws {
        if text == nil && complete == nil && fields.isEmpty {
            throw ValidationError("Give --text, --complete and/or --field NAME=VALUE.")
        }
    }

    func run() async throws {
        try await options.run { context in
            let description = try context.description(of: options.table)
            var item = try FieldAssignments(given: fields).item(for: description)
            item["id"] = .string(id)
            if let text { item["text"] = .string(text) }
            if let complete { item["complete"] = .bool(complete) }
            let table = context.table(options.table)
            guard try table.item(id: id) != nil else { throw SyncError.itemNotFound(table: options.table, id: id) }
            let stored = try await table.update(item)
            options.output("Saved \(id) locally — \(pendingSummary(of: context))", json: stored)
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
            _ = try context.description(of: options.table)
            try await context.table(options.table).delete(id: id)
            options.output("Deleted \(id) locally — \(pendingSummary(of: context))", json: ["deleted": id])
        }
    }
}

/// `client list`.
struct ClientList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the local items.")

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        try await options.run { context in
            let description = try context.description(of: options.table)
            let items = try context.table(options.table).query(TableQuery(orderBy: [.ascending("updatedAt")]))
            let pending = Dictionary(
                try context.operations.all(table: options.table).map { ($0.itemId, $0) }, uniquingKeysWith: { $1 })
            if options.json {
                options.printJSON(items)
                return
            }
            for item in items {
                var line =
                    options.table == TableDescription.todoItem.name ? describe(item) : describe(item, in: description)
                if let operation = item["id"]?.stringValue.flatMap({ pending[$0] }) {
                    line += "  (\(operation.kind.rawValue) \(operation.state.rawValue))"
                }
                print(line)
            }
            print("\(items.count) item\(items.count == 1 ? "" : "s"); \(pendingSummary(of: context))")
        }
    }
}
