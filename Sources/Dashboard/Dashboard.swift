import Background
import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import SyncClient
import Synchronization
import Views

/// A running dashboard: its HTTP server, its local store and its background sync.
///
/// ```swift
/// let dashboard = try await Dashboard.start(configuration, servicePagePath: "/service") { router in
///     service.addRoutes(to: &router)
/// }
/// print(dashboard.url)
/// ```
public final class Dashboard: Sendable {
    /// Templates every page needs; start-up fails when one is missing or broken.
    public static let requiredTemplates = [
        "layout", "partials/header", "partials/flash", "partials/pager", "data/row",
        "operations", "discard", "discard-bulk", "conflicts", "conflict", "settings", "error", "journal",
        "journal/entry", "log",
        "conflict/bulk", "conflict/decide", "conflict/cancel", "settings/policies", "data/tables", "data/list",
        "data/record", "data/delete", "doctor", "doctor/run", "settings/sync-state",
        "settings/bundle", "partials/header-counts", "data/list-body", "data/record-form", "data/record-details",
        "data/tables-list", "operations/queue", "conflicts/list", "journal/list", "sign-in", "settings/access",
    ]

    /// This todosync's version (`todosync --version`, support bundles).
    public static let version = "0.1.0"

    public let server: HTTPServer
    public let context: SyncContext
    let sync: BackgroundSync
    let autoSync: AutoSync?
    let doctorRuns: DoctorRuns
    /// Auto-sync's listening, following and probes, and the doctor runs: begun with the dashboard,
    /// cancelled and waited for by ``stop()``.
    private let work: BackgroundWork
    /// Keeps open pages in step with the store.
    let live: LiveUpdates
    /// What `/metrics` shows; auto-sync sets ``DashboardMetrics/nextAttempt``.
    public let metrics: DashboardMetrics
    /// Run by ``stop()`` before the server stops (an embedded service ends its subscriptions).
    private let beforeStop = Mutex<[@Sendable () -> Void]>([])
    /// Who may use it, when it asks who you are (bound off loopback); nil on loopback.
    let access: SignInSessions?
    /// A one-time link that signs in as an operator, made at start when the dashboard asks who you
    /// are: `todosync` prints it.
    public let signInLink: String?

    /// The dashboard's address, such as `http://127.0.0.1:8080`.
    public var url: String { server.url }
    /// The address to give a browser: a wildcard bind is named by this machine's address.
    public var browserURL: String { BrowserAddress.url(host: server.host, port: server.port, scheme: server.scheme) }

    private init(
        server: HTTPServer, context: SyncContext, sync: BackgroundSync, autoSync: AutoSync?, doctorRuns: DoctorRuns,
        work: BackgroundWork, live: LiveUpdates, metrics: DashboardMetrics, access: SignInSessions?
    ) {
        self.access = access
        signInLink = access.map {
            BrowserAddress.url(host: server.host, port: server.port, scheme: server.scheme) + SignInController.path
                + "?token="
                + $0.makeLink(for: .operator)
        }
        self.server = server
        self.context = context
        self.sync = sync
        self.autoSync = autoSync
        self.doctorRuns = doctorRuns
        self.work = work
        work.begin()
        self.live = live
        self.metrics = metrics
    }

    /// Opens the store, loads the templates, starts the server and points the store at its remote.
    ///
    /// - Parameters:
    ///   - servicePagePath: where the embedded service shows its own page (linked from the header).
    ///   - embed: adds an embedded table service's routes (`/tables/...` and its page) to the
    ///     dashboard's router. The dashboard syncs with it unless a remote is given or saved.
    public static func start(
        _ configuration: DashboardConfiguration, servicePagePath: String? = nil,
        embed: ((inout Router) -> Void)? = nil
    ) async throws -> Dashboard {
        let templates = try TemplateLibrary(
            folder: configuration.resources.templatesFolder, required: requiredTemplates)
        try FileManager.default.createDirectory(
            at: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let settings = SettingsFile(folder: configuration.dataDirectory)
        var saved = settings.settings
        saved.pushWindow = configuration.pushWindow ?? saved.pushWindow
        saved.tableProtocol = configuration.tableProtocol ?? saved.tableProtocol
        saved.autoSyncInterval = configuration.autoSyncInterval ?? saved.autoSyncInterval
        if saved != settings.settings { try settings.save(saved) }
        let context = try SyncContext(
            path: configuration.dataDirectory.appendingPathComponent("store.sqlite").path,
            configuration: {
                var sync = SyncConfiguration(
                    pushWindow: settings.settings.pushWindow ?? SyncConfiguration.defaultPushWindow,
                    tableProtocol: settings.settings.tableProtocol ?? .auto)
                sync.authTokenCommand = configuration.authTokenCommand
                sync.caFile = configuration.caFile ?? configuration.tlsCertificateFile
                sync.allowPlainHTTP = configuration.allowPlainHTTP
                return sync
            }())
        if let tables = configuration.tables { try await context.setSyncedTables(tables) }
        let sessions = Sessions()
        let metrics = DashboardMetrics()
        metrics.seedLastSuccess(context.lastSync)
        let sync = BackgroundSync(
            context: context, sessions: sessions, metrics: metrics, neverSyncs: configuration.isReadOnlyBundle
        ) {
            settings.settings.pageSize
        }
        let work = BackgroundWork()
        let autoSync =
            configuration.isReadOnlyBundle
            ? nil
            : AutoSync(
                sync: sync, context: context, metrics: metrics, work: work, timing: configuration.autoSyncTiming,
                live: configuration.live, clock: configuration.clock)
        let access =
            configuration.asksWhoYouAre
            ? SignInSessions(standing: configuration.accessTokens, now: { [clock = configuration.clock] in clock.now })
            : nil
        let csrf = CSRFProtection()
        // Known once the server is bound (port 0 picks the port then).
        let address = Mutex<String?>(nil)
        let browserAddress = Mutex<String>("")
        let hasEmbedded = embed != nil
        let embedded: @Sendable () -> String? = { hasEmbedded ? address.withLock { $0 } : nil }
        let renderer = PageRenderer(
            templates: templates, csrfToken: csrf.token, sessions: sessions, deviceName: configuration.deviceName
        ) {
            HeaderView.read(
                context: context, sync: sync, autoSync: autoSync?.status,
                servicePage: configuration.servicePageURL
                    ?? servicePagePath.flatMap { path in embedded().map { $0 + path } })
        }
        let environment = DashboardEnvironment(
            context: context, renderer: renderer, sessions: sessions, sync: sync, autoSync: autoSync,
            settings: settings,
            listRows: FragmentCache(templates: templates, template: "data/row"),
            live: LiveUpdates(context: context) { renderer.headerCounts() },
            embeddedURL: embedded, access: access)

        var router = Router()
        router.use(HostAllowList(boundTo: configuration.host, extraNames: configuration.allowedHosts))
        if configuration.logRequests { router.use(RequestLogger()) }
        if let access { router.use(AccessGate(sessions: access)) }
        if configuration.isReadOnlyBundle { router.use(ReadOnlyGuard()) }
        router.use(sessions)
        router.use(SecurityHeaders())
        // A page's error is a page; the `/api` group's are JSON.
        router.errorRenderer = renderer.error
        let files = StaticFiles(folder: configuration.resources.publicFolder)
        router.get("/public/*") { request in try files.respond(request) }
        let signIn = access.map {
            SignInController(
                access: $0, templates: templates, flashes: sessions, secure: configuration.tls != nil,
                browserURL: { browserAddress.withLock { $0 } })
        }
        signIn?.addSignIn(to: &router)
        // The embedded service checks its own requests (key, sign-in, Origin): no CSRF token.
        embed?(&router)
        let history = HistoryController(environment: environment)
        let decisions = ConflictDecisionsController(environment: environment)
        let log = LogController(environment: environment)
        let verify = VerifyController(environment: environment)
        let doctorRuns = DoctorRuns(work: work)
        router.group { pages in
            pages.use(csrf)
            signIn?.addRoutes(to: &pages)
            history.addRoutes(to: &pages)
            DataController(environment: environment).addRoutes(to: &pages)
            OperationsController(environment: environment).addRoutes(to: &pages)
            // Before ConflictsController: `/conflicts/bulk` must not be taken for a conflict's number.
            decisions.addRoutes(to: &pages)
            ConflictsController(environment: environment).addRoutes(to: &pages)
            JournalController(environment: environment).addRoutes(to: &pages)
            log.addRoutes(to: &pages)
            verify.addRoutes(to: &pages)
            SyncStateController(environment: environment).addRoutes(to: &pages)
            SettingsController(environment: environment).addRoutes(to: &pages)
            DoctorController(environment: environment, runs: doctorRuns).addRoutes(to: &pages)
            SyncController(environment: environment).addRoutes(to: &pages)
            MetricsController(context: context, metrics: metrics).addRoutes(to: &pages)
            SupportBundleController(environment: environment).addRoutes(to: &pages)
        }
        router.group("/api") { api in
            api.use(csrf)
            api.errorRenderer = ErrorRenderer.json
            APIController(environment: environment, csrfToken: csrf.token).addRoutes(to: &api)
            DataAPIController(environment: environment).addRoutes(to: &api)
            history.addAPIRoutes(to: &api)
            decisions.addAPIRoutes(to: &api)
            log.addAPIRoutes(to: &api)
            verify.addAPIRoutes(to: &api)
        }

        var listen = HTTPServer.Configuration(
            host: configuration.host, port: configuration.port, heartbeatInterval: configuration.heartbeatInterval)
        listen.tls = configuration.tls
        let server = try HTTPServer(configuration: listen, responder: router.buildResponder())
        address.withLock { $0 = Self.clientURL(host: configuration.host, port: server.port, scheme: server.scheme) }
        browserAddress.withLock {
            $0 = BrowserAddress.url(host: configuration.host, port: server.port, scheme: server.scheme)
        }
        let dashboard = Dashboard(
            server: server, context: context, sync: sync, autoSync: autoSync, doctorRuns: doctorRuns,
            work: work, live: environment.live, metrics: metrics, access: access)
        // An opened bundle keeps the remote it was made with (shown, never contacted).
        if configuration.isReadOnlyBundle { return dashboard }
        try await dashboard.applyRemote(configuration, settings: settings, embeddedURL: embedded)
        if let token = configuration.authToken { try await context.setAuthToken(token) }
        if let style = configuration.authStyle { try await context.setAuthStyle(style) }
        autoSync?.start(interval: settings.settings.autoSyncInterval)
        return dashboard
    }

    /// Chooses the remote: the command line's, else the saved one, else the embedded service.
    private func applyRemote(
        _ configuration: DashboardConfiguration, settings: SettingsFile, embeddedURL: @escaping @Sendable () -> String?
    )
        async throws
    {
        var remote = settings.settings.remoteURL.flatMap(URL.init(string:))
        var key = settings.settings.applicationKey ?? context.applicationKey
        switch configuration.remote {
        case .url(let url, let applicationKey)?:
            remote = url
            key = applicationKey
        case .embedded?:
            remote = nil
            key = nil
        case nil:
            break
        }
        try await RemoteSetting(
            context: context, settings: settings, embeddedURL: embeddedURL, embeddedKey: access?.embeddedKey
        ).apply(remote: remote, applicationKey: key, onSwitch: configuration.onRemoteSwitch)
    }

    /// The address this process uses to reach a server bound to `host` (a wildcard → loopback).
    static func clientURL(host: String, port: Int, scheme: String = "http") -> String {
        switch host {
        case "0.0.0.0": "\(scheme)://127.0.0.1:\(port)"
        case "::": "\(scheme)://[::1]:\(port)"
        default: host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
        }
    }

    /// Cancels background work and waits for it to stop, stops the server and closes the store.
    public func stop() async {
        for work in beforeStop.withLock({ $0 }) { work() }
        autoSync?.stop()
        await work.stop()
        await sync.cancel()
        await sync.waitUntilIdle()
        await server.stop()
        try? await context.close()
    }

    /// Adds work for ``stop()`` to do before the server stops.
    func onStop(_ work: @escaping @Sendable () -> Void) {
        beforeStop.withLock { $0.append(work) }
    }

    /// Waits until no sync, push or pull runs (for tests and scripts).
    public func waitUntilIdle() async {
        await sync.waitUntilIdle()
    }
}

extension Dashboard: Service {
    /// Serves until a graceful shutdown (SIGINT or SIGTERM in a `ServiceGroup`), then ``stop()``s.
    public func run() async {
        try? await gracefulShutdown()
        await stop()
    }
}
