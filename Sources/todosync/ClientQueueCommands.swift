import ArgumentParser
import Foundation
import SyncClient

/// What `client hold`, `release` and `retry` print with `--json`: the operation as it is now (nil
/// once it left the queue) and what the command did.
struct QueueActionOutput: Encodable {
    var operation: Int64
    var action: String
    /// "done", "unchanged", or a retry's push outcome ("pushed", "failed", "conflict"...).
    var outcome: String
    var state: String?
    var held: Bool
    var heldSince: Date?
    var reason: String?

    init(_ id: Int64, _ action: QueueAction, outcome: String, now: TableOperation?) {
        operation = id
        self.action = action.rawValue
        self.outcome = outcome
        state = now?.state.rawValue
        held = now?.isHeld ?? false
        heldSince = now?.hold?.since
        reason = now?.hold?.reason
    }
}

extension ClientSubcommandOptions {
    /// Holds or releases `operation` and prints `summary(changed)` with what is pending (or, with
    /// `--json`, the operation as it is now and "done" or "unchanged").
    fileprivate func perform(
        _ action: QueueAction, on operation: Int64, reason: String? = nil, summary: (_ changed: Bool) -> String
    ) async throws {
        try await run { context in
            let changed = try await context.operations.perform(action, on: operation, reason: reason)
            let now = try context.operations.operation(operation)
            output(
                summary(changed) + " — \(pendingSummary(of: context))",
                json: QueueActionOutput(operation, action, outcome: changed ? "done" : "unchanged", now: now))
        }
    }
}

/// `client hold OP [--reason TEXT]`.
struct ClientHold: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold",
        abstract: "Hold a queued operation: kept, but no push sends it (or the item's later ones) until released.",
        discussion: "Edits of the item still join the held operation, which stays held.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The operation number, as `client queue` or the dashboard's queue page lists it.")
    var operation: Int64
    @Option(help: "Why it is held (up to 500 characters), shown with it and in the row's history.")
    var reason: String?

    func validate() throws {
        if let reason, reason.count > 500 {
            throw ValidationError("--reason has \(reason.count) characters; keep it to 500.")
        }
    }

    func run() async throws {
        try await options.perform(.hold, on: operation, reason: reason) { changed in
            (changed ? "Held #\(operation)" : "#\(operation) was held already")
                + ": no push sends it until `client release \(operation)`"
        }
    }
}

/// `client release OP`.
struct ClientRelease: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release", abstract: "Release a held operation: the next push sends it.")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The operation number of a held operation.") var operation: Int64

    func run() async throws {
        try await options.perform(.release, on: operation) { changed in
            changed ? "Released #\(operation): the next push sends it" : "#\(operation) was not held"
        }
    }
}

/// `client retry OP`: a refused operation is pending again and a push sends it now.
struct ClientRetry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Retry an operation now: a refused one is pending again, and a push sends it (and the queue).")

    @OptionGroup var options: ClientSubcommandOptions
    @Argument(help: "The operation number.") var operation: Int64

    func run() async throws {
        try await options.run { context in
            let outcome = try await context.operations.retry(operation)
            let now = try context.operations.operation(operation)
            let summary: String
            switch outcome {
            case .pushed: summary = "Pushed #\(operation)"
            case .failed:
                summary = "The service refused #\(operation) again: \(now?.message ?? "no reason given")"
            case .conflict: summary = "#\(operation) met a newer copy on the service: see `client conflicts`"
            case .resolvedByServer:
                summary = "#\(operation) met a conflict; the server-wins policy kept the service's copy"
            case .skipped: summary = "#\(operation) was not sent by this push"
            }
            options.output(
                summary + " — \(pendingSummary(of: context))",
                json: QueueActionOutput(operation, .retry, outcome: outcome.rawValue, now: now))
        }
    }
}

/// `client queue`: the queued operations in push order, with the numbers `hold`, `release` and
/// `retry` take.
struct ClientQueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "List the queued operations in push order (held ones marked).")

    @OptionGroup var options: ClientSubcommandOptions

    func run() async throws {
        try await options.run { context in
            let operations = try context.operations.all()
            if options.json {
                options.printJSON(operations)
                return
            }
            for operation in operations {
                var line = "#\(operation.id) \(operation.kind.rawValue) \(operation.table)/\(operation.itemId) "
                line +=
                    operation.state.rawValue + ", \(operation.attempts) attempt\(operation.attempts == 1 ? "" : "s")"
                if let hold = operation.hold {
                    line += ", held since \(hold.since.formatted(.iso8601))" + (hold.reason.map { ": \($0)" } ?? "")
                }
                if let message = operation.message { line += "\n    last answer: \(message)" }
                print(line)
            }
            print("\(operations.count) queued — \(pendingSummary(of: context))")
        }
    }
}
