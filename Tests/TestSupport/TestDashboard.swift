import Dashboard
import Foundation
import TableService

/// The dashboard as `todosync` starts it (through ``Dashboard/launch(_:embeddedDatabase:)``), on
/// 127.0.0.1 and an ephemeral port, with its data in a temporary folder and a browser-like client.
///
/// ```swift
/// try await withTestDashboard { dashboard in          // with its embedded table service
///     let page = try await dashboard.client.send(.get, "/")
///     ...
/// }
/// ```
public final class TestDashboard: Stoppable {
    /// The running dashboard.
    public let dashboard: Dashboard
    /// Its data folder (store, settings, the embedded service's SQLite file).
    public let folder: URL
    /// A client that keeps the dashboard's cookies.
    public let client: BrowserClient

    /// A dashboard with its embedded table service, whose tables are in `database` (a SQLite file
    /// in the folder when nil), or syncing with `remote` instead.
    public init(
        database: TableService.Database? = nil, remote: DashboardConfiguration.Remote? = nil,
        configure: (inout DashboardConfiguration) -> Void = { _ in }
    ) async throws {
        folder = try TemporaryFolder().url
        var configuration = DashboardConfiguration(
            port: 0, dataDirectory: folder, resources: ProjectResources.folders, remote: remote)
        configure(&configuration)
        dashboard = try await Dashboard.launch(configuration, embeddedDatabase: database)
        // In process: the dashboard's socket is what few of its tests are about (those use `url`).
        client = BrowserClient(base: dashboard.url, responder: dashboard.server.responder)
    }

    /// The dashboard's address.
    public var url: String { dashboard.url }

    /// Stops the dashboard (background sync, server, store) and deletes its folder.
    public func stop() async {
        await dashboard.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The CSRF token, as a script reads it from `/api/status`.
    public func csrfToken() async throws -> String {
        let status = try await client.send(.get, "/api/status")
        let object = try JSONSerialization.jsonObject(with: status.body) as? [String: Any]
        return object?["csrfToken"] as? String ?? ""
    }

    /// Posts a form with the right CSRF token.
    public func submit(_ path: String, _ fields: [String: String]) async throws -> TestHTTPClient.Answer {
        var fields = fields
        fields["_csrf"] = try await csrfToken()
        return try await client.send(.post, path, form: fields)
    }
}

/// Starts a ``TestDashboard`` (arguments as ``TestDashboard/init(database:remote:configure:)``), runs
/// `body` with it, then stops it and waits until it has stopped, also when `body` throws (see
/// ``withStopping(_:isolation:_:)``).
public func withTestDashboard(
    database: TableService.Database? = nil, remote: DashboardConfiguration.Remote? = nil,
    configure: (inout DashboardConfiguration) -> Void = { _ in },
    _ body: (TestDashboard) async throws -> Void
) async throws {
    try await withStopping(TestDashboard(database: database, remote: remote, configure: configure), body)
}
