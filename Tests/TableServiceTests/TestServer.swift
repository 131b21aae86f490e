import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
@_spi(Testing) import TableService
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The databases the table-service suite runs against.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    /// SQLite always; PostgreSQL too when the test command started a cluster, and always under CI
    /// (where a missing cluster then fails the PostgreSQL cases).
    static var all: [Backend] { TestPostgres.isRequired ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }
}

/// A table service on 127.0.0.1, port 0, over a temporary SQLite file or a fresh PostgreSQL
/// database, with an HTTP client to talk to it.
final class TestServer: Sendable {
    let running: RunningTableService
    let backend: Backend
    /// Where the tables are (another instance on the same database shares it).
    let database: TableService.Database
    let folder: URL
    let http = TestHTTPClient()
    /// When set, the service's clock (milliseconds since 1970).
    let clock = ManualClock()

    /// The project's `Templates/` folder.
    static let templatesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Templates")

    /// A service on a new database of `backend`, or, with `sharing`, a second instance on the
    /// database of another server (PostgreSQL only).
    init(
        _ backend: Backend = .sqlite, sharing other: TestServer? = nil, applicationKey: String? = nil,
        pageSize: Int = 50, tables: [String] = [], controlledClock: Bool = false, page: Bool = false,
        allowedHosts: [String] = [], configure: (inout TableService.Configuration) -> Void = { _ in }
    ) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tableservice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.backend = backend
        if let other {
            database = other.database
        } else {
            switch backend {
            case .sqlite: database = .sqlite(path: folder.appendingPathComponent("tables.sqlite").path)
            case .postgres:
                var location = try PostgresLocation(url: try await TestPostgres.freshDatabase(), poolSize: 8)
                // Many servers at once on one test cluster: connections on demand only.
                location.keepsConnectionsOpen = false
                database = .postgres(location)
            }
        }
        var configuration = TableService.Configuration(
            database: database, applicationKey: applicationKey,
            pageSize: pageSize, tables: tables, templatesFolder: page ? Self.templatesFolder : nil)
        if controlledClock {
            let clock = self.clock
            configuration.clock = {
                clock.now ?? Int64(Date().timeIntervalSince1970 * 1000)
            }
        }
        configure(&configuration)
        running = try TableService.start(configuration, quiet: true, allowedHosts: allowedHosts)
        do {
            try await running.service.ready()
        } catch {
            await running.stop()
            throw error
        }
    }

    var url: String { running.url }

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
    func send(
        _ method: HTTPRequest.Method, _ target: String, headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"],
        body: Data? = nil
    ) async throws -> Reply {
        let address = target.hasPrefix("http") ? target : url + target
        var fields = headers
        if body != nil, !headers.contains(.contentType) {
            fields[.contentType] = "application/json"
        }
        let answer = try await http.send(method, address, headers: fields, body: body)
        return Reply(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// Sends a JSON body.
    func send(
        _ method: HTTPRequest.Method, _ target: String, json: [String: Any],
        headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
    ) async throws -> Reply {
        try await send(method, target, headers: headers, body: try JSONSerialization.data(withJSONObject: json))
    }

    /// Stops the server on a thread of its own: the tests call this from `defer` on Swift's
    /// cooperative threads, which the server's asynchronous handlers still in progress need.
    func stop() {
        let running = running
        let folder = folder
        Thread {
            running.stop()
            try? FileManager.default.removeItem(at: folder)
        }.start()
    }
}

/// A settable clock shared with the service under test.
final class ManualClock: Sendable {
    private let value = Mutex<Int64?>(nil)
    var now: Int64? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
