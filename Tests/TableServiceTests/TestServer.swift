import Clocks
import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
@_spi(Testing) import TableService
import TestSupport
import Testing

/// The databases the table-service suite runs against.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    /// SQLite always; PostgreSQL too when the test command started a cluster, and always under CI
    /// (where a missing cluster then fails the PostgreSQL cases).
    static var all: [Backend] { TestPostgres.isRequired ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }
}

/// A table service (TestSupport's ``TestService``) over a temporary SQLite file or a fresh
/// PostgreSQL database, with the settings these tests vary and an HTTP client to talk to it.
final class TestServer: Stoppable {
    let started: TestService
    let backend: Backend
    let folder: TemporaryFolder
    let http = TestHTTPClient()
    /// When set, the service's clock (milliseconds since 1970).
    let clock = ManualClock()
    /// With `controlledTimers`, what the service's timers wait on: they fire as the test moves it.
    let timers = TestClock<Duration>()

    var running: RunningTableService { started.running }
    /// Where the tables are (another instance on the same database shares it).
    var database: TableService.Database { started.database }

    /// A service on a new database of `backend`, or, with `sharing`, a second instance on the
    /// database of another server (PostgreSQL only).
    init(
        _ backend: Backend = .sqlite, sharing other: TestServer? = nil, applicationKey: String? = nil,
        pageSize: Int = 50, tables: [String] = [], controlledClock: Bool = false, controlledTimers: Bool = false,
        page: Bool = false, allowedHosts: [String] = [],
        configure: (inout TableService.Configuration) -> Void = { _ in }
    ) async throws {
        folder = try TemporaryFolder()
        self.backend = backend
        let database: TableService.Database
        if let other {
            database = other.database
        } else {
            switch backend {
            case .sqlite: database = .sqlite(path: folder.file("tables.sqlite"))
            case .postgres:
                database = .postgres(try PostgresLocation(url: try await TestPostgres.freshDatabaseURL(), poolSize: 8))
            }
        }
        var configuration = TableService.Configuration(
            database: database, applicationKey: applicationKey,
            pageSize: pageSize, tables: tables, templatesFolder: page ? ProjectResources.templatesFolder : nil)
        if controlledClock {
            let clock = self.clock
            configuration.clock = {
                clock.now ?? Int64(Date().timeIntervalSince1970 * 1000)
            }
        }
        if controlledTimers { configuration.timers = timers }
        configure(&configuration)
        started = try await TestService(configuration, allowedHosts: allowedHosts)
    }

    var url: String { started.url }

    /// A response as the tests read it.
    struct Reply: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
        var object: [String: Any]? { json as? [String: Any] }
        var array: [[String: Any]]? { json as? [[String: Any]] }
    }

    /// Sends a request; `target` is a path with its (already encoded) query. v2 unless told otherwise.
    ///
    /// In process, through the service's router (``Responder/respond(to:)``), as from a client on
    /// loopback; over the socket when `target` is a whole address (another host name: the socket is
    /// what is tested). An event stream's answer comes over the socket too.
    func send(
        _ method: HTTPRequest.Method, _ target: String, headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"],
        body: Data? = nil
    ) async throws -> Reply {
        var fields = headers
        if body != nil, !headers.contains(.contentType) {
            fields[.contentType] = "application/json"
        }
        if target.hasPrefix("http") {
            let answer = try await http.send(method, target, headers: fields, body: body)
            return Reply(status: answer.status, headers: answer.headers, body: answer.body)
        }
        let answer = try await http.send(
            method, url + target, headers: fields, body: body, through: running.server.responder)
        return Reply(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// Sends a JSON body.
    func send(
        _ method: HTTPRequest.Method, _ target: String, json: [String: Any],
        headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
    ) async throws -> Reply {
        try await send(method, target, headers: headers, body: try JSONSerialization.data(withJSONObject: json))
    }

    /// Stops the server and removes its folder.
    func stop() async {
        await started.stop()
        folder.remove()
    }
}

/// Starts a ``TestServer`` (arguments as its initializer), runs `body` with it, then stops it and
/// removes its folder, waiting until that is done, also when `body` throws (see TestSupport's
/// `withStopping`).
func withTestServer(
    _ backend: Backend = .sqlite, sharing other: TestServer? = nil, applicationKey: String? = nil,
    pageSize: Int = 50, tables: [String] = [], controlledClock: Bool = false, controlledTimers: Bool = false,
    page: Bool = false, allowedHosts: [String] = [], configure: (inout TableService.Configuration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Void
) async throws {
    try await withStopping(
        TestServer(
            backend, sharing: other, applicationKey: applicationKey, pageSize: pageSize, tables: tables,
            controlledClock: controlledClock, controlledTimers: controlledTimers, page: page,
            allowedHosts: allowedHosts, configure: configure),
        body)
}

/// Runs `body` with another instance on `server`'s database when it is a PostgreSQL one (which
/// several instances serve), or with `server` itself on SQLite; stops that other instance after,
/// waiting until it has stopped, also when `body` throws.
func withInstanceSharing(
    _ server: TestServer, _ body: (TestServer) async throws -> Void
) async throws {
    guard server.backend == .postgres else {
        try await body(server)
        return
    }
    try await withTestServer(.postgres, sharing: server, body)
}

/// A settable clock shared with the service under test.
final class ManualClock: Sendable {
    private let value = Mutex<Int64?>(nil)
    var now: Int64? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
