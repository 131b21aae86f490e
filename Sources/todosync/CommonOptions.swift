import ArgumentParser
import Dashboard
import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import SyncClient
import UnixSignals
import Views

/// `--host` and `--port`.
struct ListenOptions: ParsableArguments {
    @Option(help: "Address to listen on. Only this machine can connect to the default.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
    }
}

/// `--ca-file` and `--allow-plain-http`: what a client trusts, and where it sends secrets.
struct TransportSecurityOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Trust the CAs in this PEM file besides the system's (a service with your own CA or a development "
                + "certificate).", valueName: "file"))
    var caFile: String?

    @Flag(
        help: ArgumentHelp(
            "Send the application key and the token in plain HTTP to another machine too (refused by default: "
                + "anyone on the way could read them)."))
    var allowPlainHttp = false

    /// Sets both in a sync configuration.
    func apply(to configuration: inout SyncConfiguration) {
        configuration.caFile = caFile
        configuration.allowPlainHTTP = allowPlainHttp
    }

    func validate() throws {
        guard let caFile else { return }
        guard let text = try? String(contentsOfFile: caFile, encoding: .utf8) else {
            throw ValidationError("--ca-file '\(caFile)' cannot be read; give a PEM file of CA certificates.")
        }
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw ValidationError("--ca-file '\(caFile)' holds no PEM certificate.")
        }
    }
}

/// `--tls-cert` and `--tls-key`: serve HTTPS (libmicrohttpd's own TLS), on `serve` and the dashboard.
struct TLSOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Serve HTTPS with this certificate (PEM, with its chain).", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The certificate's private key (PEM, unencrypted).", valueName: "file"))
    var tlsKey: String?

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together.") }
    }

    /// The certificate and key; nil for plain HTTP.
    func identity() throws -> TLSIdentity? {
        guard let tlsCert, let tlsKey else { return nil }
        do { return try TLSIdentity.read(certificate: tlsCert, key: tlsKey) } catch {
            throw ValidationError(error.description)
        }
    }
}

/// `--access-token-file`, on the commands that start a dashboard: off loopback it asks who you are.
struct AccessOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Bound off loopback, the dashboard asks who you are: these tokens sign in (one a line, optionally "
                + "'viewer TOKEN' or 'operator TOKEN'), besides the one-time link printed at start.",
            valueName: "path"))
    var accessTokenFile: String?

    /// The file's tokens with their roles; none without the option.
    func tokens() throws -> [String: AccessRole] {
        guard let accessTokenFile else { return [:] }
        do { return try AccessTokenFile.read(accessTokenFile) } catch { throw ValidationError(error.description) }
    }
}

/// What to print once a dashboard listens: its address, or, when it asks who you are, the one-time
/// link that signs in as an operator.
func dashboardAddress(_ dashboard: Dashboard) -> String {
    guard let link = dashboard.signInLink else { return "open \(dashboard.url)/" }
    return "sign in at \(link)  (it works once; anyone who can reach \(dashboard.browserURL) is asked who they are)"
}

/// `--allowed-host`, on every command that starts a server.
struct AllowedHostOptions: ParsableArguments {
    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "Also answer requests for this host name (repeatable), e.g. a name the server is reached by "
                + "through a proxy. Loopback names and IP addresses are always answered; other names get 421.",
            valueName: "name"))
    var names: [String] = []

    func validate() throws {
        for name in names where name.isEmpty || name.contains("/") || name.contains(where: \.isWhitespace) {
            throw ValidationError("--allowed-host '\(name)' is not a host name; write it like todo.example.org.")
        }
    }
}

/// `--push-window`, on the dashboard and the scripting client.
struct PushWindowOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How many changes a push keeps on the wire at once, 1 to \(SyncConfiguration.maximumPushWindow) "
                + "(default \(SyncConfiguration.defaultPushWindow); 1 sends them one by one in queue order). "
                + "The dashboard saves it in its settings.",
            valueName: "n"))
    var pushWindow: Int?

    func validate() throws {
        if let pushWindow, SyncConfiguration.clampedPushWindow(pushWindow) != pushWindow {
            throw ValidationError(
                "--push-window must be from 1 to \(SyncConfiguration.maximumPushWindow), not \(pushWindow).")
        }
    }
}

/// `--auto-sync`, on the dashboard and the demo.
struct AutoSyncOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Sync by itself every this many seconds (5 to 86400; 0 turns it off), a few seconds after each "
                + "change, and after failures with a growing backoff (2 s up to 5 min). Saved in the settings.",
            valueName: "seconds"))
    var autoSync: Int?

    @Option(
        help: ArgumentHelp(
            "Follow the remote's change channel while auto-sync is on: auto (when the remote offers it, as "
                + "todosync serve does; else poll), on, or off (always poll).",
            valueName: "auto|on|off"))
    var live: LiveMode = .auto

    func validate() throws {
        if let autoSync { try Self.check(autoSync) }
    }

    /// Refuses an interval outside ``DashboardConfiguration/autoSyncRange`` (0 is off), naming the flag.
    static func check(_ seconds: Int) throws {
        let range = DashboardConfiguration.autoSyncRange
        guard seconds == 0 || range.contains(seconds) else {
            throw ValidationError(
                "--auto-sync must be from \(range.lowerBound) to \(range.upperBound) seconds, or 0 for off, not \(seconds)."
            )
        }
    }

    /// The interval for the configuration: nil keeps the saved one, 0 turns it off.
    var interval: Double? { autoSync.map(Double.init) }
}

extension ProtocolChoice: ExpressibleByArgument {}

/// `--protocol`, on the dashboard and the scripting client.
struct ProtocolOption: ParsableArguments {
    @Option(
        name: .customLong("protocol"),
        help: ArgumentHelp(
            "The table protocol: v2 (Azure Mobile Apps), v3 (Datasync) or auto (ask the service once and keep "
                + "its answer with the remote; the default). The dashboard saves it in its settings.",
            valueName: "auto|v2|v3"))
    var choice: ProtocolChoice?
}

/// `--public-dir` and `--templates-dir`.
struct ResourceOptions: ParsableArguments {
    @Option(help: "Folder of CSS, scripts and icons (default: found next to the executable).")
    var publicDir: String?

    @Option(help: "Folder of HTML templates (default: found next to the executable).")
    var templatesDir: String?

    func locate() throws -> ResourceFolders {
        try ResourceFolders.locate(publicDir: publicDir, templatesDir: templatesDir)
    }
}

/// SIGINT and SIGTERM, trapped: from now on they no longer end the process (they are delivered to
/// the sequence, buffered until it is read). A server command traps them first, before it starts
/// anything, so that a signal that comes while it starts stops it cleanly.
func trapTerminationSignals() async -> UnixSignalsSequence {
    await UnixSignalsSequence(trapping: .sigterm, .sigint)
}

/// Runs `services` (servers that stop when shut down gracefully) until one of `signals` comes (or
/// came while they started), then shuts them down in reverse order: the last one given stops first.
func runUntilTerminated(_ services: [any Service], signals: UnixSignalsSequence) async throws {
    var logger = Logger(label: "todosync")
    logger.logLevel = .warning
    let group = ServiceGroup(configuration: .init(services: services, logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        tasks.addTask {
            for await _ in signals { await group.triggerGracefulShutdown() }
        }
        // The service group's end (the signal watch ends only when cancelled).
        try await tasks.next()
        tasks.cancelAll()
    }
}

/// Prints a line at once, also when standard output is a pipe (start-up lines are read by scripts).
func announce(_ line: String) {
    print(line)
    fflush(nil)
}

extension LiveMode: ExpressibleByArgument {}

extension TokenCommand {
    /// `--auth-token-command`'s help, the same on every command that takes it.
    static let help = ArgumentHelp(
        "A command that prints the sign-in token (e.g. \"az account get-access-token --query accessToken -o tsv\"), "
            + "run at the first request, after a 401 and a minute before the token expires. Its tokens are kept "
            + "in memory only.",
        valueName: "command")

    /// Refuses an empty command, or one given with `--auth-token` (which token would be sent?).
    static func validate(_ command: String?, besides token: String?) throws {
        guard let command else { return }
        if command.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--auth-token-command is empty; give the command that prints the token.")
        }
        if token != nil {
            throw ValidationError("--auth-token-command and --auth-token exclude each other: give one.")
        }
    }
}

extension AuthStyle: ExpressibleByArgument {
    /// `--auth-style`'s help, the same on every command that takes it.
    static let help = ArgumentHelp(
        "How the token is sent: zumo (X-ZUMO-AUTH) or bearer (Authorization: Bearer), saved. At first: zumo "
            + "over v2, bearer over v3, as each protocol's own clients send it.")
}

/// How a store syncs with its service, the same for `client` and `dashboard`: how the sign-in
/// token is sent and which command prints it, the CAs trusted, what a switch of service does with
/// queued changes, the push window and the protocol.
struct SyncOptions: ParsableArguments {
    @Option(help: AuthStyle.help)
    var authStyle: AuthStyle?

    @Option(help: TokenCommand.help)
    var authTokenCommand: String?

    @OptionGroup var trust: TransportSecurityOptions

    @OptionGroup var remoteSwitch: RemoteSwitchOption
    @OptionGroup var push: PushWindowOption
    @OptionGroup var tableProtocol: ProtocolOption
}
