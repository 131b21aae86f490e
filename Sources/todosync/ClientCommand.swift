import ArgumentParser
import Dashboard
import Foundation
import Logging
import SyncClient
import SyncProtocol
import UnixSignals

/// `todosync client --store PATH --remote URL <command>`: the sync client for scripts and tests.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Edit a local store offline and sync it with a table service.",
        discussion: """
            Every command opens the store, does one thing and prints a short summary (JSON with --json).
            Edits only change the store and queue an operation; push sends them, pull fetches the server's rows.
            """,
        subcommands: [
            ClientAdd.self, ClientEdit.self, ClientDelete.self, ClientList.self, ClientPush.self, ClientPull.self,
            ClientPurge.self, ClientStatus.self, ClientConflicts.self, ClientResolve.self, ClientHold.self,
            ClientRelease.self, ClientRetry.self, ClientQueue.self,
            ClientPolicy.self, ClientJournal.self, ClientOverturn.self, ClientUndo.self, ClientLog.self,
            ClientVerify.self, ClientTokens.self, ClientHistory.self, ClientBundle.self, ClientWatch.self,
        ]
    )

    @OptionGroup var options: ClientOptions
}

/// What every `client` subcommand takes, declared once as `@OptionGroup var options: ClientSubcommandOptions`:
/// the `client` command's options (`--store`, `--remote`, `--table`...), and `--json` accepted after
/// the subcommand's name too (`client --store s.sqlite push --json`).
@dynamicMemberLookup
struct ClientSubcommandOptions: ParsableArguments {
    @ParentCommand var client: ClientCommand

    @Flag(name: .customLong("json"), help: "Print JSON instead of a summary.")
    var jsonAfterName = false

    /// The options in effect: the `client` command's, with `--json` set when either place gave it.
    var resolved: ClientOptions {
        var options = client.options
        options.json = options.json || jsonAfterName
        return options
    }

    subscript<T>(dynamicMember keyPath: KeyPath<ClientOptions, T>) -> T { resolved[keyPath: keyPath] }

    /// See ``ClientOptions/run(_:)``.
    func run(_ body: (SyncContext) async throws -> Void) async throws { try await resolved.run(body) }

    /// See ``ClientOptions/printJSON(_:)``.
    func printJSON<T: Encodable>(_ value: T) { resolved.printJSON(value) }

    /// See ``ClientOptions/output(_:json:)``.
    func output<T: Encodable>(_ summary: @autoclosure () -> String, json value: T) {
        resolved.output(summary(), json: value)
    }
}

/// The options every client command takes.
struct ClientOptions: ParsableArguments {
    @Option(help: "The local store (SQLite file, created if needed). Required by every command.")
    var store: String?

    @Option(help: "The table service's address, such as http://127.0.0.1:8080 (saved in the store).")
    var remote: String?

    @Option(help: "The application key sent as X-ZUMO-APPLICATION (saved in the store).")
    var appKey: String?

    @Option(help: "A signed-in user's token (saved in the store; \"\" removes it), sent as --auth-style says.")
    var authToken: String?

    @OptionGroup var sync: SyncOptions

    @Option(
        help: """
            The table to work on: any table of the service (letters, digits and underscores). \
            pull brings a table the store does not hold yet.
            """)
    var table = "todoitem"

    @Flag(help: "Print JSON instead of a summary.")
    var json = false

    func validate() throws {
        do { try TableDescription.checkName(table) } catch { throw ValidationError("--table: \(error.description)") }
        if let remote { _ = try RemoteAddress.option(remote) }
        try TokenCommand.validate(sync.authTokenCommand, besides: authToken)
    }

    /// Opens the store; errors are printed by ``run(_:)``.
    /// A move to another service is said on standard error (the rows it removed, the changes kept).
    func open() throws -> SyncContext {
        guard let store else {
            throw ValidationError("Missing expected argument '--store <store>' (the local SQLite file).")
        }
        var configuration = SyncConfiguration(
            remoteURL: remote.flatMap(URL.init(string:)), applicationKey: appKey,
            pushWindow: sync.push.pushWindow ?? SyncConfiguration.defaultPushWindow, authToken: authToken,
            onRemoteSwitch: sync.remoteSwitch.onSwitch, tableProtocol: sync.tableProtocol.choice ?? .auto)
        configuration.authStyle = sync.authStyle
        configuration.authTokenCommand = sync.authTokenCommand.map { TokenCommand($0) }
        sync.trust.apply(to: &configuration)
        let context = try SyncContext(path: store, configuration: configuration)
        if case .switched(let report)? = context.openingChange {
            FileHandle.standardError.write(Data((report.summary + "\n").utf8))
        }
        return context
    }

    /// Runs a command body: a `SyncError` becomes a message on standard error and exit status 1.
    ///
    /// SIGINT or SIGTERM cancels a running sync: it stops within moments, the store is left
    /// consistent, "Cancelled" goes to standard error and the exit status is 0 (a clean stop).
    func run(_ body: (SyncContext) async throws -> Void) async throws {
        // Trapped first: a signal while the store opens must not end the process unclean.
        let signals = await trapTerminationSignals()
        do {
            let context = try open()
            let (outcome, signalled) = await cancellingOnSignals(context, signals) {
                answerBundleRequests(context)
                try await body(context)
                // A bundle the service asked for during the command is sent before it ends.
                await context.reporting.finishUploads()
            }
            if case .failure(let error as SyncError) = outcome, error == .stopped(.cancelled), signalled {
                FileHandle.standardError.write(Data((StopReason.cancelled.description + "\n").utf8))
                return
            }
            try outcome.get()
            try? await context.close()
        } catch let error as SyncError {
            if RemoteSwitchOption.isRefusal(error) { throw failure(RemoteSwitchOption.explain(error)) }
            throw failure(error.description)
        } catch let error as ConflictDecisionError {
            throw failure(error.description)
        } catch let error as FieldAssignmentError {
            throw failure(error.description)
        }
    }

    /// Uploads the support bundle `todosync client bundle` writes when the service's admin asks
    /// for it (docs/fleet.md).
    private func answerBundleRequests(_ context: SyncContext) {
        let (appKey, authToken) = (appKey, authToken)
        context.reporting.onBundleRequest {
            let settings = SupportBundle.Settings(
                remoteURL: context.remoteURL, pageSize: nil, pushWindow: await context.pushWindow,
                tableProtocol: context.protocolChoice, syncedTables: (try? context.syncedTables()) ?? [],
                offline: context.isOffline, applicationKeyWasSet: appKey != nil,
                signInTokenWasSet: context.authTokenHint != nil)
            await SupportBundle.upload(
                context, settings: settings, secrets: [appKey, authToken], madeBy: "client", version: Todosync.version,
                logger: Logger(label: "todosync.client"))
        }
    }

    /// Prints the error (as JSON with `--json`); the command then exits with status 1.
    private func failure(_ message: String) -> ExitCode {
        if json {
            printJSON(["error": message])
        } else {
            FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
        }
        return ExitCode.failure
    }

    /// Prints a value as JSON (sorted keys, dates as ISO-8601).
    func printJSON<T: Encodable>(_ value: T) {
        if let data = try? JSONEncoder.todosync(pretty: true).encode(value) {
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// Prints `summary`, or `value` as JSON with `--json`.
    func output<T: Encodable>(_ summary: @autoclosure () -> String, json value: T) {
        if json { printJSON(value) } else { print(summary()) }
    }
}

/// "3 changes pending" for summaries: `context`'s queue, its conflicts, failed and held changes.
func pendingSummary(of context: SyncContext) -> String {
    guard let status = try? context.status() else { return "" }
    var text = "\(status.pending) change\(status.pending == 1 ? "" : "s") pending"
    if status.conflicts > 0 { text += ", \(status.conflicts) conflict\(status.conflicts == 1 ? "" : "s")" }
    if status.failed > 0 { text += ", \(status.failed) failed" }
    if status.held > 0 { text += ", \(status.held) held" }
    return text
}

/// One line for an item: `id  [x] text`.
func describe(_ item: Item) -> String {
    let done = item["complete"]?.boolValue == true ? "[x]" : "[ ]"
    let id = item["id"]?.stringValue ?? "?"
    let text = item["text"].map { $0.isNull ? "" : $0.description } ?? ""
    return "\(id)  \(done) \(text)"
}

/// One line for an item of any table: `id  name=value name=value ...`, in the table's column order,
/// values as JSON (a value of another type than its column's marked with `!`).
func describe(_ item: Item, in table: TableDescription) -> String {
    let id = item["id"]?.stringValue ?? "?"
    let mismatched = Set(table.mismatchedColumns(of: item))
    let fields = table.columns.compactMap { column -> String? in
        guard let value = item[column.name], value != .null else { return nil }
        return "\(column.name)=\(value.jsonText)\(mismatched.contains(column.name) ? "!" : "")"
    }
    return ([id] + fields).joined(separator: "  ")
}

/// Runs `work` while SIGINT and SIGTERM cancel `context`'s running sync (they are trapped: they no
/// longer end the process at once); what it did, and whether a signal came.
private func cancellingOnSignals(
    _ context: SyncContext, _ signals: UnixSignalsSequence, _ work: () async throws -> Void
) async -> (outcome: Result<Void, any Error>, signalled: Bool) {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            var signalled = false
            for await _ in signals {
                signalled = true
                context.jobs.cancel()
            }
            return signalled
        }
        let outcome: Result<Void, any Error>
        do {
            try await work()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        group.cancelAll()
        return (outcome, await group.next() ?? false)
    }
}
