import FaultProxy
import Foundation
import HTTPServer
import TableService

/// The table service as `todosync serve` runs it, in this process: on 127.0.0.1 and an ephemeral
/// port, over a temporary SQLite file or a fresh PostgreSQL database.
///
/// ```swift
/// try await withStopping(TestService.sqlite(in: folder)) { service in
///     let proxy = try await service.proxy(plan: .always(.dropResponse, probability: 0.3))
///     ...
///     await proxy.stop()
/// }
/// ```
public final class TestService: Stoppable {
    /// The service and its HTTP server.
    public let running: RunningTableService
    /// What it was started with (another instance on the same database takes the same).
    public let configuration: TableService.Configuration
    /// The extra host names it answers (see ``TableService/start(_:host:port:quiet:allowedHosts:logger:)``).
    public let allowedHosts: [String]
    /// Plain protocol requests to the service, as another device would send them.
    public let rest: TableClient

    /// Starts a service with `configuration` on `port` (0 picks a free one) and waits until its
    /// database is ready.
    public init(
        _ configuration: TableService.Configuration, port: Int = 0, allowedHosts: [String] = [],
        tls: TLSIdentity? = nil
    ) async throws {
        self.configuration = configuration
        self.allowedHosts = allowedHosts
        running = try TableService.start(
            configuration, port: port, quiet: true, allowedHosts: allowedHosts, tls: tls)
        rest = TableClient(base: running.url)
        do {
            try await running.service.ready()
        } catch {
            await running.stop()
            throw error
        }
    }

    /// A service keeping `tables` in `folder/service.sqlite`; `configure` changes other settings.
    public static func sqlite(
        in folder: TemporaryFolder, tables: [String] = ["todoitem"], allowedHosts: [String] = [],
        tls: TLSIdentity? = nil, configure: (inout TableService.Configuration) -> Void = { _ in }
    ) async throws -> TestService {
        var configuration = TableService.Configuration(
            database: .sqlite(path: folder.file("service.sqlite")), tables: tables)
        configure(&configuration)
        return try await TestService(configuration, allowedHosts: allowedHosts, tls: tls)
    }

    /// A service keeping `tables` in a new, empty database of the test cluster (see ``TestPostgres``).
    public static func postgres(
        tables: [String] = ["todoitem"], poolSize: Int = 8, allowedHosts: [String] = [],
        configure: (inout TableService.Configuration) -> Void = { _ in }
    ) async throws -> TestService {
        var configuration = TableService.Configuration(
            database: try await TestPostgres.freshDatabase(poolSize: poolSize), tables: tables)
        configure(&configuration)
        return try await TestService(configuration, allowedHosts: allowedHosts)
    }

    /// A second instance on the same database (a PostgreSQL one: several instances serve it), on
    /// another port.
    public func anotherInstance() async throws -> TestService {
        try await TestService(configuration, allowedHosts: allowedHosts)
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { running.url }
    /// ``url`` as a `URL`, as a sync context takes its remote.
    public var endpoint: URL { URL(string: running.url)! }
    /// The bound port.
    public var port: Int { running.port }
    /// Where the tables are.
    public var database: TableService.Database { configuration.database }
    /// The SQLite file, when the tables are in one.
    public var sqlitePath: String? {
        if case .sqlite(let path) = configuration.database { path } else { nil }
    }

    /// A ``FaultProxy`` in front of the service, applying `plan`.
    ///
    /// To take the service away and bring it back, point the client at a proxy and switch its plan
    /// (`.always(.refuse)`, then `.passThrough`) rather than stopping the service: the proxy keeps
    /// its port, while a stopped service's port may be taken by another test's service meanwhile
    /// (a client would then meet that one, or a restart on the same port would fail).
    public func proxy(plan: FaultPlan = .passThrough) async throws -> FaultProxy {
        try await FaultProxy(upstream: url, plan: plan)
    }

    /// Stops the server, letting requests in progress finish, and closes the database.
    public func stop() async {
        await running.stop()
    }
}
