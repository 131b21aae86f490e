import Dashboard
import Foundation
import HTTPServer
import HTTPTypes
import TableService
import TestSupport
import Views

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real dashboard with its embedded table service on 127.0.0.1 (port 0), in a temp folder,
/// and a browser-like client that keeps cookies and does not follow redirects.
final class DashboardHarness: Sendable {
    let dashboard: Dashboard
    let folder: URL
    let client: Client

    static var projectRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// A dashboard whose embedded service keeps its tables in `database` (a SQLite file in the
    /// folder when `nil`).
    init(database: TableService.Database? = nil) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-\(UUID().uuidString)")
        let resources = ResourceFolders(
            publicFolder: Self.projectRoot.appendingPathComponent("Public"),
            templatesFolder: Self.projectRoot.appendingPathComponent("Templates"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let service = try TableService(
            configuration: .init(
                database: database ?? .sqlite(path: folder.appendingPathComponent("service.sqlite").path),
                tables: ["todoitem"],
                templatesFolder: resources.templatesFolder))
        try await service.ready()
        dashboard = try await Dashboard.start(
            DashboardConfiguration(port: 0, dataDirectory: folder, resources: resources),
            servicePagePath: "/service"
        ) { router in service.addRoutes(to: &router) }
        client = Client(base: dashboard.url)
    }

    func stop() async { await dashboard.stop() }

    /// The CSRF token, as a script reads it.
    func csrfToken() async throws -> String {
        let status = try await client.send(.get, "/api/status")
        let object = try JSONSerialization.jsonObject(with: status.body) as? [String: Any]
        return object?["csrfToken"] as? String ?? ""
    }

    /// Posts a form with the right token.
    func submit(_ path: String, _ fields: [String: String]) async throws -> Client.Answer {
        var fields = fields
        fields["_csrf"] = try await csrfToken()
        return try await client.send(.post, path, form: fields)
    }
}

/// An HTTP client for tests: keeps cookies, never follows redirects.
final class Client: Sendable {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let base: String
    private let http = TestHTTPClient(keepsCookies: true)

    init(base: String) {
        self.base = base
    }

    func send(
        _ method: HTTPRequest.Method, _ path: String, form: [String: String]? = nil, json: Data? = nil,
        headers: HTTPFields = [:]
    ) async throws -> Answer {
        var fields = HTTPFields()
        var body: Data?
        if let form {
            fields[.contentType] = "application/x-www-form-urlencoded"
            body = Data(
                form.map { "\(PercentDecoding.encode($0.key))=\(PercentDecoding.encode($0.value))" }
                    .joined(separator: "&").utf8)
        }
        if let json {
            fields[.contentType] = "application/json"
            body = json
        }
        fields.append(contentsOf: headers)
        let answer = try await http.send(method, base + path, headers: fields, body: body)
        return Answer(status: answer.status, headers: answer.headers, body: answer.body)
    }
}
