import ArgumentParser
import Dashboard
import Foundation
import HTTPServer
import SyncClient
import Views

/// `todosync [dashboard]`: the web dashboard on 127.0.0.1:8080, with an embedded table service
/// unless `--remote` names another one.
struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Start the web dashboard (the default command).",
        discussion: """
            Without --remote the dashboard embeds a table service (its page is at /service), so that \
            syncing works out of the box. Data lives in --data-dir.
            """
    )

    @OptionGroup var listen: ListenOptions
    @OptionGroup var allowedHosts: AllowedHostOptions
    @OptionGroup var access: AccessOptions
    @OptionGroup var tls: TLSOptions
    @OptionGroup var resources: ResourceOptions

    @Option(help: "Folder for the local store, the embedded service's database and the settings.")
    var dataDir = "data"

    @Option(help: "Sync with this table service instead of the embedded one (e.g. http://127.0.0.1:8090).")
    var remote: String?

    @Option(help: "Application key sent as X-ZUMO-APPLICATION to the remote service.")
    var appKey: String?

    @Option(help: "A signed-in user's token (saved; also settable on the Settings page), sent as --auth-style says.")
    var authToken: String?

    @OptionGroup var sync: SyncOptions
    @OptionGroup var autoSync: AutoSyncOption

    @Option(
        name: .customLong("table"),
        help: ArgumentHelp(
            "A table of the service to sync and show under /data (repeatable; saved, like the Tables setting).",
            valueName: "name"))
    var tables: [String] = []

    @Flag(help: "Log one line per request.")
    var verbose = false

    func validate() throws {
        if let remote { _ = try RemoteAddress.option(remote) }
        for table in tables {
            do { try TableDescription.checkName(table) } catch {
                throw ValidationError("--table: \(error.description)")
            }
        }
        try TokenCommand.validate(sync.authTokenCommand, besides: authToken)
        if appKey != nil, remote == nil {
            throw ValidationError("--app-key needs --remote: the embedded service has no key.")
        }
    }

    func run() async throws {
        let signals = await trapTerminationSignals()
        var configuration = DashboardConfiguration(
            host: listen.host, port: listen.port, dataDirectory: URL(fileURLWithPath: dataDir),
            resources: try resources.locate(),
            remote: try remote.map { .url(try RemoteAddress.option($0).url, applicationKey: appKey) },
            logRequests: verbose, allowedHosts: allowedHosts.names, authToken: authToken,
            onRemoteSwitch: sync.remoteSwitch.onSwitch, pushWindow: sync.push.pushWindow,
            tables: tables.isEmpty ? nil : tables, tableProtocol: sync.tableProtocol.choice)
        configuration.autoSyncInterval = autoSync.interval
        configuration.live = autoSync.live
        configuration.accessTokens = try access.tokens()
        configuration.authStyle = sync.authStyle
        configuration.authTokenCommand = sync.authTokenCommand.map { TokenCommand($0) }
        configuration.caFile = sync.trust.caFile
        configuration.allowPlainHTTP = sync.trust.allowPlainHttp
        configuration.tls = try tls.identity()
        configuration.tlsCertificateFile = tls.tlsCert
        let dashboard = try await configuration.launchFromCommandLine()
        announce("todosync dashboard: \(dashboardAddress(dashboard))  (Ctrl-C stops it)")
        try await runUntilTerminated([dashboard], signals: signals)
        announce("todosync stopped.")
    }
}

extension RemoteAddress {
    /// Reads the address given to `option` (`--remote`, a doctor's URL); a mistake is a usage error.
    static func option(_ text: String, _ option: String = "--remote") throws -> RemoteAddress {
        do { return try RemoteAddress(text) } catch { throw ValidationError("\(option): \(error)") }
    }
}

/// The command line's side of ``Dashboard/launch(_:embeddedDatabase:)`` (shared with `demo`):
/// failures as the command line words them.
extension DashboardConfiguration {
    func launchFromCommandLine() async throws -> Dashboard {
        do {
            return try await Dashboard.launch(self)
        } catch let error as HTTPServerError {
            throw ValidationError("\(error) (see --port and --host)")
        } catch let error as SyncError where RemoteSwitchOption.isRefusal(error) {
            FileHandle.standardError.write(
                Data(("error: " + RemoteSwitchOption.explain(error) + " Or start without --remote.\n").utf8))
            throw ExitCode.failure
        }
    }
}
