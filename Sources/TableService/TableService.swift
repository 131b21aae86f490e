import Background
import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import Views

/// The table service: any number of tables in one SQLite file or one PostgreSQL database, spoken
/// to with the Mobile Apps table protocol (v2, and the 2015 Mobile Services style for requests
/// without `ZUMO-API-VERSION`) and the CommunityToolkit Datasync protocol (v3, for requests with
/// `ZUMO-API-VERSION: 3.0.x`) side by side; its tables are described in OpenAPI at `/openapi.json`.
///
/// Embed it in another server with ``addRoutes(to:)``, or run it alone with
/// ``start(_:host:port:quiet:allowedHosts:logger:)``:
///
/// ```swift
/// let running = try TableService.start(.init(database: .sqlite(path: "tables.sqlite")), port: 8080)
/// print(running.url)   // http://127.0.0.1:8080 — /tables/{table}, page at /service
/// await running.stop()
/// ```
public final class TableService: Sendable {
    /// Where the tables are kept.
    public enum Database: Sendable {
        /// One SQLite file (created if needed); `nil` keeps everything in memory. One process only.
        case sqlite(path: String?)
        /// A PostgreSQL database, which any number of service instances may share.
        case postgres(PostgresLocation)
    }

    /// How the service stores, pages and guards its tables.
    public struct Configuration: Sendable {
        /// Where the tables are kept.
        public var database: Database
        /// When set, every `/tables` request must carry it in `X-ZUMO-APPLICATION` (else 401).
        public var applicationKey: String?
        /// Rows per page when a query has no `$top` (a table's declared `pageSize` wins).
        public var pageSize: Int
        /// The largest `$top` accepted in v2 (more is a 400). In v3, which accepts `$top` up to
        /// 128,000 and pages the rest through `nextLink`, the most rows one page of an undeclared
        /// table holds.
        public var maximumTop: Int
        /// Tables created at start (so that reading them before the first write gives `[]`, not 404).
        public var tables: [String]
        /// Origins, besides the service's own, whose browser pages may call the service (CORS) and
        /// write to it. Pages of the service's own origin (scheme, host and port) always may.
        public var allowedOrigins: [WebOrigin]
        /// The base of `Link` URLs (such as `https://example.org`); `nil` uses the request's `Host`.
        public var publicURL: String?
        /// Where the service's own page is served.
        public var pagePath: String
        /// The project's `Templates/` folder; the page (under ``pagePath``) is served only when given.
        public var templatesFolder: URL?
        /// The CSRF token the page's forms carry; pass the dashboard's when both share a router
        /// (its middleware then accepts the page's forms). Random per process when `nil`.
        public var csrfToken: String?
        /// Signed-in users (`X-ZUMO-AUTH`) and per-user tables; `nil` ignores tokens.
        public var signIn: SignIn?
        /// Tables declared in a schema file (`todosync serve --schema`): column types, page size
        /// and soft delete. Other tables and columns stay dynamic.
        public var schema: ServiceSchema
        /// The clock of `createdAt`/`updatedAt` in milliseconds since 1970; replays set it to the
        /// reference timeline. `nil` is the system clock.
        @_spi(Testing) public var clock: (@Sendable () -> Int64)?
        /// Rows per batch of a schema change's backfill; `nil` sizes batches by time
        /// (``BackfillPacer``), a number fixes them (tests that stop after some rows).
        @_spi(Testing) public var backfillBatchSize: Int?
        /// The most backfill batches run after this start (the rest waits for the next start, as
        /// after a SIGTERM); `nil`: all.
        @_spi(Testing) public var backfillBatchesPerStart: Int?
        /// The most subscriptions the change channel (`/tables/{table}/$changes`) keeps open at
        /// once; more are answered 503 with `Retry-After`.
        public var maxSubscribers: Int
        /// The key of the service's admin pages and `/service/api` (`--admin-key`); without it they
        /// answer loopback requests only.
        public var adminKey: String?
        /// When a device counts as behind, stalled or offline (see `docs/fleet.md`).
        public var fleetThresholds = FleetThresholds()
        /// Where stall alerts are POSTed (`--alert-webhook`).
        public var alertWebhook: URL?
        /// The pause before the n-th try of an alert after a failure; tests shorten it.
        @_spi(Testing) public var alertPause: (@Sendable (Int) -> Duration)?
        /// A continuous backup of the SQLite file (`--backup-dir`); refused with PostgreSQL.
        public var backup: BackupSettings?
        /// The clock the service's timers wait on: the backup's idle rounds, the fleet's passes, the
        /// alerts' retries and the change channel's long polls (tests step it instead of waiting).
        /// What paces the database (a backfill's rests, the PostgreSQL bus's batching) keeps to real time.
        @_spi(Testing) public var timers: any Clock<Duration> = ContinuousClock()
        /// Whether the backup keeps each round's timing (for the benchmark's lag).
        @_spi(Testing) public var recordsBackupTimings = false

        /// A configuration; the defaults are the official server's (pages of 50, `$top` up to 1000),
        /// in memory, without key, tables or page, answering browser pages of its own origin only.
        public init(
            database: Database = .sqlite(path: nil), applicationKey: String? = nil, pageSize: Int = 50,
            maximumTop: Int = 1000,
            tables: [String] = [], allowedOrigins: [WebOrigin] = [],
            publicURL: String? = nil, pagePath: String = "/service", templatesFolder: URL? = nil,
            csrfToken: String? = nil, signIn: SignIn? = nil, schema: ServiceSchema = ServiceSchema(),
            maxSubscribers: Int = 10_000
        ) {
            self.maxSubscribers = maxSubscribers
            self.schema = schema
            self.database = database
            self.applicationKey = applicationKey
            self.pageSize = pageSize
            self.maximumTop = maximumTop
            self.tables = tables
            self.allowedOrigins = allowedOrigins
            self.publicURL = publicURL
            self.pagePath = pagePath
            self.templatesFolder = templatesFolder
            self.csrfToken = csrfToken
            self.signIn = signIn
        }
    }

    public let configuration: Configuration
    /// What `GET /metrics` of ``start(_:host:port:quiet:allowedHosts:logger:)`` shows.
    public let metrics = ServiceMetrics()
    /// The continuous backup (``Configuration/backup``): run it in the service's `ServiceGroup`,
    /// before the service.
    public let backup: ContinuousBackup?
    /// The devices that sync with the service (`X-ZUMO-INSTALLATION-ID`), learned from their requests.
    let fleet: Fleet
    let fleetAlerts: FleetAlerts
    private let bookkeeping: FleetBookkeeping
    /// The fleet's passes, the schema backfill and the alerts' deliveries, stopped together.
    private let work = BackgroundWork()
    let store: any TableStorage
    /// Stamps the rows that schema changes gave new values, in the background.
    private let backfill: SchemaBackfill
    private let logger: Logger
    private let page: ServicePage?
    private let verifier: TokenVerifier?

    /// Opens (or creates) the database and the configured tables. A SQLite file is ready when this
    /// returns; a PostgreSQL database is connected to and prepared in the background (requests
    /// wait for it): await ``ready()`` to learn that it worked.
    public init(
        configuration: Configuration, logger: Logger = Logger(label: "todosync.tables")
    )
        throws(TableServiceError)
    {
        guard configuration.pageSize > 0, configuration.maximumTop >= configuration.pageSize else {
            throw .invalidConfiguration(
                "The page size (\(configuration.pageSize)) must be at least 1 and at most the maximum $top "
                    + "(\(configuration.maximumTop)).")
        }
        if let key = configuration.applicationKey, key.isEmpty {
            throw .invalidConfiguration("The application key is empty; give a non-empty key or none.")
        }
        if let key = configuration.adminKey, key.count < 16 {
            throw .invalidConfiguration("The admin key is too short: give at least 16 characters.")
        }
        if let hook = configuration.alertWebhook,
            !["http", "https"].contains(hook.scheme?.lowercased() ?? "") || hook.host == nil
        {
            throw .invalidConfiguration("The alert webhook '\(hook)' is not an http:// or https:// address.")
        }
        self.configuration = configuration
        self.logger = logger
        let owned = configuration.signIn?.perUserTables ?? []
        for table in configuration.tables + owned where !Self.isValidTableName(table) {
            throw .invalidConfiguration(
                "'\(table)' is not a table name: use letters, digits and underscores, starting with a letter.")
        }
        guard configuration.maxSubscribers >= 0 else {
            throw .invalidConfiguration("The most subscribers (\(configuration.maxSubscribers)) cannot be negative.")
        }
        let clock = configuration.clock ?? Self.systemClock
        let changes = ChangeFeed(limit: configuration.maxSubscribers)
        let store: any TableStorage
        switch configuration.database {
        case .sqlite(let path):
            if configuration.backup != nil, path == nil {
                throw .invalidConfiguration(
                    "--backup-dir needs a database file: an in-memory database has none to copy.")
            }
            let sqlite = try SQLiteTableStore(
                path: path, clock: clock, tables: configuration.tables, ownedTables: owned,
                declarations: configuration.schema.tables, changes: changes, shipsWAL: configuration.backup != nil)
            store = sqlite
            if let settings = configuration.backup, let path {
                backup = try ContinuousBackup(
                    store: sqlite, path: path, settings: settings,
                    clock: configuration.timers,
                    now: clock, logger: logger, recordsTimings: configuration.recordsBackupTimings)
            } else {
                backup = nil
            }
        case .postgres(let location):
            guard configuration.backup == nil else {
                throw .invalidConfiguration(
                    "--backup-dir backs up a SQLite --database only. Back up PostgreSQL with its own tools: a base "
                        + "copy with pg_basebackup and continuous WAL archiving (archive_command), as "
                        + "docs/backups.md shows.")
            }
            backup = nil
            store = PostgresTableStore(
                location: location, clock: clock, stampsBy: configuration.clock.map(GivenClock.init(now:)),
                tables: configuration.tables, ownedTables: owned,
                declarations: configuration.schema.tables, logger: logger, changes: changes)
        }
        self.store = store
        fleet = Fleet(
            clock: clock, thresholds: configuration.fleetThresholds, store: store, perUserTables: owned,
            metrics: metrics, logger: logger)
        fleetAlerts = FleetAlerts(
            fleet: fleet, webhook: configuration.alertWebhook, work: work, timers: configuration.timers,
            logger: logger, pause: configuration.alertPause ?? FleetAlerts.backoff)
        bookkeeping = FleetBookkeeping(fleet: fleet, alerts: fleetAlerts, timers: configuration.timers)
        backfill = SchemaBackfill(
            store: store, batchSize: configuration.backfillBatchSize,
            maximumBatches: configuration.backfillBatchesPerStart, logger: logger)
        let (bookkeeping, backfill) = (bookkeeping, backfill)
        work.begin([{ await bookkeeping.run() }, { await backfill.run() }])
        verifier = try configuration.signIn.map { signIn throws(TableServiceError) in try TokenVerifier(signIn) }
        // The page shows every user's rows: with sign-in it is served only behind the application key.
        if let folder = configuration.templatesFolder,
            configuration.signIn == nil || configuration.applicationKey != nil || configuration.adminKey != nil
        {
            let templates: TemplateLibrary
            do {
                templates = try TemplateLibrary(folder: folder, required: ServicePage.templates)
            } catch {
                throw .invalidConfiguration(error.description)
            }
            let base =
                configuration.pagePath.hasSuffix("/")
                ? String(configuration.pagePath.dropLast()) : configuration.pagePath
            page = ServicePage(
                store: store, fleet: fleet, alerts: fleetAlerts, templates: templates,
                publicFolder: folder.deletingLastPathComponent().appendingPathComponent("Public"), base: base,
                csrfToken: configuration.csrfToken ?? CSRFProtection.randomToken(),
                access: ServiceAccess(adminKey: configuration.adminKey, applicationKey: configuration.applicationKey),
                sessionToken: CSRFProtection.randomToken(), logger: logger)
        } else {
            page = nil
        }
    }

    /// Adds `/tables/{table}` and `/tables/{table}/{id}` (every method of the protocol, and
    /// `OPTIONS` for CORS) to `router`, and the HTML page under ``Configuration/pagePath`` when
    /// ``Configuration/templatesFolder`` is set (and, with sign-in, an application key guards it).
    public func addRoutes(to router: inout Router) {
        page?.addRoutes(to: &router)
        TableController(
            store: store, configuration: configuration,
            cors: CORSPolicy(allowedOrigins: Set(configuration.allowedOrigins)),
            verifier: verifier, logger: logger, fleet: fleet
        ).addRoutes(to: &router)
    }

    /// `GET /metrics`: ``metrics`` in the Prometheus text format, each table's rows read now.
    public func metricsResponse() async -> Response {
        if let summaries = try? await store.tableSummaries() {
            metrics.updateRows(Dictionary(summaries.map { ($0.schema.name, $0.live) }, uniquingKeysWith: +))
        }
        if let syncs = store.diskSyncs { metrics.updateDiskSyncs(syncs) }
        if let reads = store.databaseReads { metrics.updateDatabaseReads(reads) }
        metrics.updateSubscribers(store.changes.subscriberCount)
        let devices = await fleet.assessments()
        var counts = Dictionary(uniqueKeysWithValues: DeviceState.allCases.map { ($0.rawValue, 0) })
        for device in devices { counts[device.state.rawValue, default: 0] += 1 }
        metrics.updateDevices(counts, writingOldShape: devices.filter { !$0.record.oldNames.isEmpty }.count)
        return PrometheusExposition.response(metrics.exposition())
    }

    /// Milliseconds since 1970 by the system clock.
    static let systemClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// What `schema` would change in `database` (columns, rows to backfill, a time estimate),
    /// read without changing anything; throws when the file would be refused at start.
    public static func planSchemaChanges(
        _ schema: ServiceSchema, database: Database, logger: Logger = Logger(label: "todosync.tables")
    ) async throws(TableServiceError) -> SchemaChangeReport {
        switch database {
        case .sqlite(let path):
            // In memory: planned against an empty database.
            return try SQLiteTableStore.planSchemaChanges(path: path ?? "", declarations: schema.tables)
        case .postgres(let location):
            return try await PostgresTableStore.planSchemaChanges(
                location: location, declarations: schema.tables, logger: logger)
        }
    }

    /// Waits until the database is open and prepared; throws when it cannot be (a PostgreSQL
    /// server that cannot be reached or refuses the login, say).
    public func ready() async throws(TableServiceError) {
        try await store.ready()
    }

    /// Ends every subscription of the change channel (long polls answer at once, streams end with
    /// a hint to reconnect): call it before stopping the server that routes to the service, whose
    /// stop waits for the requests in progress.
    public func endSubscriptions() {
        store.changes.close()
    }

    /// Subscriptions of the change channel open now.
    public var subscriberCount: Int { store.changes.subscriberCount }

    /// The fleet's background passes run so far.
    @_spi(Testing) public var fleetPasses: Int { bookkeeping.passes.withLock { $0 } }

    /// Waits until the backfills of the schema changes applied at start are done (or stopped).
    @_spi(Testing) public func schemaBackfillsFinished() async {
        await backfill.finished()
    }

    /// Stops the background work (the fleet's passes, the schema backfill after its batch in
    /// progress, the alerts' deliveries) and waits for it, then saves the devices seen since the
    /// last save (``Fleet``): call it once the server that routes to the service has stopped,
    /// before ``close()``.
    public func saveInstallations() async {
        await work.stop()
        await fleet.save()
        await fleetAlerts.shutDown()
    }

    /// Closes the database connections (after the server that routes to the service has stopped).
    public func close() {
        work.cancel()
        store.changes.close()
        store.close()
    }

    /// Starts an HTTP server with the service's routes, logging one line per request unless `quiet`.
    /// It answers only requests whose `Host` is its address, a loopback name, or one of
    /// `allowedHosts` (others get 421: see ``HostAllowList``).
    public static func start(
        _ configuration: Configuration, host: String = "127.0.0.1", port: Int = 0, quiet: Bool = false,
        allowedHosts: [String] = [], tls: TLSIdentity? = nil, logger: Logger = Logger(label: "todosync.tables")
    ) throws(TableServiceError) -> RunningTableService {
        let service = try TableService(configuration: configuration, logger: logger)
        var router = Router()
        router.use(HostAllowList(boundTo: host, extraNames: allowedHosts))
        if !quiet { router.use(RequestLogger()) }
        router.use(RequestMetrics(metrics: service.metrics, store: service.store))
        router.get("/metrics") { _ in await service.metricsResponse() }
        service.addRoutes(to: &router)
        do {
            // Subscribers of the change channel hold their connections: room for them besides the rest.
            var listen = HTTPServer.Configuration(
                host: host, port: port, connectionLimit: 1000 + configuration.maxSubscribers)
            listen.tls = tls
            let server = try HTTPServer(configuration: listen, responder: router.buildResponder())
            return RunningTableService(service: service, server: server)
        } catch {
            service.close()
            throw .cannotListen(error.description)
        }
    }

    /// Whether `name` can be a table: `[A-Za-z][A-Za-z0-9_]*`, at most 64 characters, not `sqlite_…`.
    public static func isValidTableName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 64,
            (65...90).contains(first) || (97...122).contains(first),
            !bytes.prefix(7).elementsEqual("sqlite_".utf8, by: { $0 | 0x20 == $1 | 0x20 })
        else { return false }
        return bytes.allSatisfy {
            (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_")
        }
    }
}
