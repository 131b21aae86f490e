import ArgumentParser
import Foundation
import SyncClient
import SyncProtocol

extension ConflictPolicy: ExpressibleByArgument {
    /// `server-wins`, `client-wins` like every other value of the CLI; the camelCase forms keep working.
    public init?(argument: String) {
        let camel = argument.split(separator: "-").enumerated().map { $0 == 0 ? String($1) : $1.capitalized }.joined()
        self.init(rawValue: camel)
    }

    /// The kebab-case form: `server-wins`.
    var argument: String {
        rawValue.reduce(into: "") { text, character in
            if character.isUppercase { text += "-" + character.lowercased() } else { text.append(character) }
        }
    }

    public static var allValueStrings: [String] { allCases.map(\.argument) }
}
extension JournalEntry.Decision: ExpressibleByArgument {}

/// `client policy [ask|merge|server-wins|client-wins]`: shows or sets the table's conflict policy.
struct ClientPolicy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "Show or set the conflict policy of the table (--table).",
        discussion: """
            ask: every conflict waits for you. merge (default): fields changed on one side merge by themselves, \
            only true collisions wait. server-wins / client-wins: one side always wins (serverWins and clientWins \
            are read too).
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "ask, merge, server-wins or client-wins; omit it to show the current policy.")
    var policy: ConflictPolicy?

    func run() async throws {
        try await options.run { context in
            if let policy { try await context.conflicts.setPolicy(policy, for: options.table) }
            let current = try context.conflicts.policy(for: options.table)
            options.output(
                "\(options.table): \(current.argument)", json: ["table": options.table, "policy": current.argument])
        }
    }
}

/// `client journal`: the conflict outcomes, newest first.
struct ClientJournal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal", abstract: "List the conflict journal, newest first (JSON Lines with --json).")

    @OptionGroup var options: ClientSubcommandOptions
    @Option(help: "Only this decision: use-client, use-server, merge, pick or overturn.")
    var decision: JournalEntry.Decision?
    @Option(help: "Only entries of this item id.") var item: String?
    @Option(help: "Only entries whose values contain this text.") var search: String?
    @Option(help: "At most this many entries (newest first).") var limit = 100
    @Option(help: "From now on keep only the newest N entries (10,000 unless changed).") var keep: Int?

    func validate() throws {
        if let keep, keep < 1 { throw ValidationError("--keep needs a number of entries of at least 1.") }
    }

    func run() async throws {
        try await options.run { context in
            if let keep { try await context.setRetention(of: .journal, to: keep) }
            let query = JournalQuery(decision: decision, itemId: item, text: search, limit: 100)
            try printNewestFirst(limit: limit, json: options.json) { before in
                var paged = query
                paged.before = before
                let page = try context.journal.entries(paged)
                return (page.entries, page.next)
            } text: {
                JournalLine($0).text
            }
        }
    }
}

/// One journal entry as a line or two of text.
struct JournalLine {
    let entry: JournalEntry

    init(_ entry: JournalEntry) { self.entry = entry }

    var text: String {
        let when = ISO8601DateFormatter().string(from: entry.recordedAt)
        var line =
            "\(entry.id)  \(when)  \(entry.decision.label) by \(entry.decidedBy.label)  "
            + "\(entry.operation.rawValue) \(entry.table)/\(entry.itemId)  "
            + "version \(entry.versionBefore ?? "—") → \(entry.versionAfter ?? "deleted")"
        for (label, item) in [("base", entry.base), ("client", entry.client), ("server", entry.server)] {
            line += "\n    \(label): \(Self.values(item))"
        }
        line += "\n    result: \(Self.values(entry.result))"
        return line
    }

    /// `text="milk", complete=false`, or "(deleted)".
    static func values(_ item: Item?) -> String {
        guard let item else { return "(none)" }
        return item.keys.filter { !SystemColumn.all.contains($0) }.sorted().map { key in
            let value = item[key] ?? .null
            return value.stringValue.map { "\(key)=\"\($0)\"" } ?? "\(key)=\(value)"
        }.joined(separator: ", ")
    }
}

/// `client overturn ENTRY`.
struct ClientOverturn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "overturn",
        abstract: "Overturn a journal entry: push the values that lost (a new conflict if the service moved).")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The entry's id, as listed by `journal`.") var entry: String

    func run() async throws {
        try await options.run { context in
            let outcome = try await context.journal.overturn(entry)
            let summary =
                switch outcome {
                case .pushed: "Overturned \(entry): the values that lost are on the service now"
                case .conflict: "The service changed since \(entry): that is a new conflict, resolve it first"
                default: "Overturn of \(entry): \(outcome.rawValue)"
                }
            options.output(
                summary + " — \(pendingSummary(of: context))", json: ["entry": entry, "outcome": outcome.rawValue])
            if outcome != .pushed { throw ExitCode.failure }
        }
    }
}

/// `client undo BATCH`: undoes a bulk decision.
struct ClientUndo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo", abstract: "Undo a bulk decision: overturn every journal entry of the batch.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The batch id, as listed by `journal --json`.") var batch: String

    func run() async throws {
        try await options.run { context in
            let undo = try await context.journal.undo(batch: batch)
            let pushed = undo.overturned.values.filter { $0 == .pushed }.count
            options.output(
                "Undid \(pushed) of \(undo.overturned.count) decisions — \(pendingSummary(of: context))",
                json: ["batch": batch, "overturned": String(pushed), "entries": String(undo.overturned.count)])
        }
    }
}
