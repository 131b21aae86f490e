import ArgumentParser
import Foundation
import Storage
import TableService

/// `todosync serve`: the table service alone.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the table service (Mobile Apps v2 and Datasync v3 table protocols over SQLite or PostgreSQL).",
        discussion: """
            Clients sync with /tables/{table}; the service's own page is at /service. With a PostgreSQL \
            database, any number of instances can serve the same tables (behind a load balancer such as nginx).
            """
    )

    @Option(help: "Address to listen on. Only this machine can connect to the default.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8090

    @Option(
        help: ArgumentHelp(
            "SQLite file of the tables (created if missing), or a PostgreSQL URL.",
            discussion: """
                postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]; \
                without a password in the URL, PGPASSWORD is used.
                """))
    var database = "data/service.sqlite"

    @Option(help: "Most connections this instance opens to PostgreSQL.")
    var poolSize = 20

    @Option(help: "Require this key in X-ZUMO-APPLICATION on every request.")
    var appKey: String?

    @Option(help: "Rows per page when a query has no $top.")
    var pageSize = 50

    @Option(help: "The largest $top a query may ask for.")
    var maxTop = 1000

    @Option(
        help: ArgumentHelp(
            "A JSON file declaring tables: column types, page size and soft delete (see docs/protocol.md).",
            discussion: """
                {"movies": {"pageSize": 100, "softDelete": false, "columns": {"title": "string", "year": "integer", \
                "rating": {"enum": ["G", "PG", "R"]}}}}. Types: string, integer, number, boolean, datetime, \
                date-only, time-of-day, {"enum": [values in order]}. Other tables and columns stay dynamic.
                """, valueName: "file"))
    var schema: String?

    @Flag(
        help:
            "With --schema: print what the file would change (columns, rows to backfill, a time estimate), change nothing."
    )
    var plan = false

    @Option(
        help: ArgumentHelp(
            "Most clients subscribed to the change channel at once (more are answered 503 with Retry-After).",
            valueName: "n"))
    var maxSubscribers = 10_000

    @Flag(help: "Do not log requests.")
    var quiet = false

    @OptionGroup var allowedHosts: AllowedHostOptions
    @OptionGroup var signIn: SignInOptions
    @OptionGroup var tls: TLSOptions

    @Option(
        name: .customLong("allowed-origin"),
        help: ArgumentHelp(
            "Also let browser pages from this origin (scheme, host and port, such as http://localhost:3000) "
                + "call the service and write to it (repeatable). Pages of the service's own origin always may.",
            valueName: "origin"),
        transform: { text in
            guard let origin = WebOrigin(text) else {
                throw ValidationError(
                    "give the scheme, host and port of the page, such as http://localhost:3000 (no path).")
            }
            return origin
        })
    var allowedOrigins: [WebOrigin] = []

    @Option(
        help: ArgumentHelp(
            "Print a token for this user id, signed with --auth-secret (valid 24 hours), and exit: for trying "
                + "a service with signed-in users locally.", valueName: "user"))
    var issueToken: String?
    @Option(
        help: ArgumentHelp(
            "Back up the SQLite database continuously into this folder (a base copy and every commit, at most "
                + "a second behind); restore with `todosync restore`.", valueName: "folder"))
    var backupDir: String?

    @Option(
        help: ArgumentHelp(
            "With --backup-dir: how far back a restore can go (such as 7d, 12h, 30m).", valueName: "duration"))
    var backupKeep = "7d"

    @OptionGroup var resources: ResourceOptions
    @OptionGroup(title: "Fleet") var fleet: FleetOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard pageSize >= 1 else { throw ValidationError("--page-size must be at least 1.") }
        guard maxTop >= pageSize else { throw ValidationError("--max-top must be at least --page-size (\(pageSize)).") }
        guard maxSubscribers >= 0 else { throw ValidationError("--max-subscribers cannot be negative.") }
        if let issueToken {
            guard signIn.authSecret != nil else {
                throw ValidationError("--issue-token needs --auth-secret (the secret the service checks tokens with).")
            }
            guard !issueToken.isEmpty else { throw ValidationError("--issue-token needs a user id, such as alice.") }
        }
        if let appKey, appKey.isEmpty { throw ValidationError("--app-key is empty; give a key or leave the flag out.") }
        guard poolSize >= 1 else { throw ValidationError("--pool-size must be at least 1.") }
        guard BackupKeep.parse(backupKeep) != nil else {
            throw ValidationError(
                "--backup-keep: '\(backupKeep)' is not a duration: give a whole number and d, h, m or s, such as 7d.")
        }
    }

    /// Where `--database` points.
    func location() throws -> TableService.Database {
        guard PostgresLocation.isURL(database) else {
            let folder = URL(fileURLWithPath: database).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return .sqlite(path: database)
        }
        do {
            return .postgres(try PostgresLocation(url: database, poolSize: poolSize))
        } catch {
            throw ValidationError("--database: \(error)")
        }
    }

    /// The tables `--schema` declares (none without it); a file that cannot be used stops `serve`.
    func schemaFile() throws -> ServiceSchema {
        guard let schema else { return ServiceSchema() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: schema))
        } catch {
            throw ValidationError("--schema: cannot read \(schema): \(error.localizedDescription)")
        }
        do {
            return try ServiceSchema(json: data)
        } catch {
            throw ValidationError("--schema \(schema): \(error.description)")
        }
    }

    func run() async throws {
        let signals = await trapTerminationSignals()
        if let user = issueToken, let configuration = try signIn.signIn() {
            print(try await TokenIssuer.token(for: user, signIn: configuration))
            return
        }
        let store = try location()
        let declared = try schemaFile()
        if plan {
            guard schema != nil else { throw ValidationError("--plan needs --schema FILE: the file to plan.") }
            do {
                print(try await TableService.planSchemaChanges(declared, database: store))
            } catch {
                throw ValidationError("--schema \(schema ?? ""): \(error)")
            }
            return
        }
        let templates = try? resources.locate().templatesFolder
        let running: RunningTableService
        var configuration = TableService.Configuration(
            database: store, applicationKey: appKey, pageSize: pageSize, maximumTop: maxTop,
            tables: ["todoitem"],
            allowedOrigins: allowedOrigins,
            templatesFolder: templates, signIn: try signIn.signIn(), schema: declared,
            maxSubscribers: maxSubscribers)
        try fleet.apply(to: &configuration)
        if let backupDir {
            configuration.backup = BackupSettings(folder: backupDir, keep: BackupKeep.parse(backupKeep)!)
        }
        // Held while the service runs: `todosync restore` refuses to replace the file under it.
        var lock: ServiceFileLock?
        if case .sqlite(let path?) = store {
            do { lock = try ServiceFileLock(databasePath: path) } catch {
                throw ValidationError("--database: \(error)")
            }
        }
        defer { withExtendedLifetime(lock) {} }
        do {
            running = try TableService.start(
                configuration,
                host: host, port: port, quiet: quiet, allowedHosts: allowedHosts.names, tls: try tls.identity())
        } catch {
            throw ValidationError("\(error)")
        }
        do {
            try await running.service.ready()
        } catch {
            await running.stop()
            throw ValidationError("\(error)")
        }
        announce(
            "todosync table service: \(running.url)/tables/todoitem  (page: \(running.url)/service; Ctrl-C stops it)")
        // The backup stops after the service (the last given stops first), shipping its last commits.
        try await runUntilTerminated((running.service.backup.map { [$0] } ?? []) + [running], signals: signals)
        announce("todosync serve stopped.")
    }
}
