import Dashboard
import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import TableService
import TestSupport
import Testing
import Views

/// The dashboard under hostile input: forms and JSON with broken, huge or wrongly typed values
/// show the form again (or a JSON error) and store nothing; every POST without the right CSRF
/// token is a 403; a foreign `Host` is a 421.
@Suite struct DashboardHostileInputTests {
    /// A dashboard with its embedded service in a temporary folder, and a cookie-keeping client.
    final class Harness: Sendable {
        let started: TestDashboard
        let http = TestHTTPClient(keepsCookies: true)
        var dashboard: Dashboard { started.dashboard }

        init() async throws {
            started = try await TestDashboard()
        }

        func send(
            _ method: HTTPRequest.Method, _ path: String, body: Data? = nil, contentType: String? = nil,
            headers: HTTPFields = [:]
        )
            async throws -> (status: Int, type: String, text: String)
        {
            var fields = headers
            if let contentType { fields[.contentType] = contentType }
            let answer = try await http.send(method, dashboard.url + path, headers: fields, body: body)
            return (answer.status, answer.headers["content-type"] ?? "", answer.text)
        }

        func token() async throws -> String {
            let status = try await send(.get, "/api/status")
            let object = try JSONSerialization.jsonObject(with: Data(status.text.utf8)) as? [String: Any]
            return object?["csrfToken"] as? String ?? ""
        }

        /// Posts a raw form body (already encoded, possibly broken) with the right token first.
        func submit(_ path: String, rawForm: Data) async throws -> (status: Int, type: String, text: String) {
            let prefix = Data("_csrf=\(try await token())&".utf8)
            return try await send(
                .post, path, body: prefix + rawForm, contentType: "application/x-www-form-urlencoded")
        }

        /// Rows and queue, to check that a refused request stored nothing.
        func snapshot() throws -> String {
            let context = dashboard.context
            let rows = try context.table("todoitem").query()
                .map { row in row.keys.sorted().map { "\($0)=\(row[$0]!)" }.joined(separator: ",") }.sorted()
            let queue = try context.operations.all().map { "\($0.kind) \($0.itemId) \($0.state)" }
            return "\(rows) \(queue) \(context.remoteURL ?? "-") \(context.isOffline)"
        }

        func stop() async {
            await started.stop()
        }
    }

    static let megabyte = String(repeating: "m", count: (1 << 20) - 200)

    /// Broken or hostile values for the todo forms, encoded as they would arrive.
    static let hostileTodoForms: [(label: String, body: Data)] = [
        ("empty text", Data("field%3Atext=".utf8)),
        ("only spaces", Data("field%3Atext=%20%20%20".utf8)),
        ("text over the limit", Data("field%3Atext=\(String(repeating: "x", count: 1001))".utf8)),
        ("emoji over the limit", Data("field%3Atext=\(String(repeating: "%F0%9F%98%80", count: 1001))".utf8)),
        ("almost 1 MiB of text", Data("field%3Atext=\(megabyte)".utf8)),
        ("complete neither yes nor no", Data("field%3Atext=milk&field%3Acomplete=maybe".utf8)),
        ("invalid UTF-8", Data("field%3Atext=%FF%FEmilk".utf8)),
        ("raw invalid UTF-8 bytes", Data("field%3Atext=".utf8) + Data([0xC3, 0x28, 0xFF])),
        ("broken percent-encoding", Data("field%3Atext=%zz%4".utf8)),
    ]

    @Test func hostileTodoFormsShowTheFormAgainAndStoreNothing() async throws {
        let harness = try await Harness()
        let table = harness.dashboard.context.table("todoitem")
        try await table.insert(["id": "keep", "text": "original", "complete": false])
        let before = try harness.snapshot()
        for (label, body) in Self.hostileTodoForms {
            // The add form has no "complete" field: it ignores one.
            let paths = label.hasPrefix("complete") ? ["/items/keep"] : ["/items", "/items/keep"]
            // A body that is not a form cannot prove its CSRF token: refused before any handler.
            let undecodable = label.contains("UTF-8") || label.contains("percent")
            for path in paths {
                let answer = try await harness.submit(path, rawForm: body)
                let allowed: Set<Int> = undecodable ? [400, 403] : [400, 413, 422]
                #expect(allowed.contains(answer.status), "\(label) on \(path): HTTP \(answer.status)")
                #expect(answer.type.hasPrefix("text/html"), "\(label) on \(path): \(answer.type)")
                #expect(
                    answer.text.contains("<form") || answer.status != 422,
                    "\(label) on \(path): the form is not shown again")
                #expect(!answer.text.isEmpty, "\(label) on \(path): no message")
                #expect(try harness.snapshot() == before, "\(label) on \(path) stored something")
            }
        }
        let oversized = try await harness.submit(
            "/items", rawForm: Data("field%3Atext=\(Self.megabyte)\(Self.megabyte)".utf8))
        #expect(oversized.status == 413)
        #expect(try harness.snapshot() == before)
        await harness.stop()
    }

    @Test func hostileSettingsShowTheFormAgainAndChangeNothing() async throws {
        let harness = try await Harness()
        let before = try harness.snapshot()
        let forms = [
            "remote=javascript%3Aalert(1)&pageSize=50", "remote=ftp%3A%2F%2F127.0.0.1&pageSize=50",
            "remote=http%3A%2F%2F&pageSize=50", "remote=\(Self.megabyte.prefix(100_000))&pageSize=50",
            "remote=%FF%FE&pageSize=50", "pageSize=-1", "pageSize=0", "pageSize=99999999999999999999999",
            "pageSize=ten",
            "pageSize=1e3",
        ]
        for form in forms {
            let answer = try await harness.submit("/settings", rawForm: Data(form.utf8))
            let allowed: Set<Int> = form.contains("%FF") ? [400, 403] : [400, 422]
            #expect(allowed.contains(answer.status), "\(form.prefix(60)): HTTP \(answer.status)")
            #expect(try harness.snapshot() == before, "\(form.prefix(60)) changed the settings")
        }
        await harness.stop()
    }

    @Test func hostileJSONIsA4xxWithAMessageAndStoresNothing() async throws {
        let harness = try await Harness()
        let token = try await harness.token()
        let before = try harness.snapshot()
        let bodies: [(String, Data)] = [
            ("malformed", Data(#"{"text": "a""#.utf8)), ("array", Data("[1]".utf8)),
            ("text as a number", Data(#"{"text": 5}"#.utf8)),
            ("complete as text", Data(#"{"text":"a","complete":"yes"}"#.utf8)),
            ("empty id", Data(#"{"text":"a","id":""}"#.utf8)), ("nested", Data(#"{"text":{"a":[1]}}"#.utf8)),
            ("deep nesting", Data(String(repeating: "[", count: 50_000).utf8)),
            ("invalid UTF-8", Data(#"{"text":""#.utf8) + Data([0xFF, 0xFE]) + Data(#""}"#.utf8)),
            ("almost 1 MiB", Data(#"{"text":"\#(Self.megabyte)"}"#.utf8)),
            ("over 1 MiB", Data(#"{"text":"\#(Self.megabyte)\#(Self.megabyte)"}"#.utf8)),
        ]
        for (label, body) in bodies {
            let answer = try await harness.send(
                .post, "/api/data/todoitem", body: body, contentType: "application/json",
                headers: [CSRFProtection.headerName: token])
            #expect([400, 413, 422].contains(answer.status), "\(label): HTTP \(answer.status)")
            let message =
                (try? JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])?["error"] as? String
            #expect(message?.isEmpty == false, "\(label): no JSON message in \(answer.text.prefix(200))")
            #expect(try harness.snapshot() == before, "\(label) stored something")
        }
        await harness.stop()
    }

    @Test func everyPostWithoutOrWithAWrongCSRFTokenIsRefused() async throws {
        let harness = try await Harness()
        let table = harness.dashboard.context.table("todoitem")
        try await table.insert(["id": "a", "text": "keep", "complete": false])
        let before = try harness.snapshot()
        let paths = [
            "/items", "/items/a", "/items/a/delete", "/settings", "/sync", "/push", "/pull", "/operations/1/discard",
            "/conflicts/1/resolve", "/api/data/todoitem", "/items/a/set", "/api/settings", "/api/sync",
            "/api/push", "/api/pull", "/api/operations/1/discard", "/api/conflicts/1/resolve",
        ]
        for path in paths {
            let missing = try await harness.send(
                .post, path, body: Data("text=forged&remote=http%3A%2F%2Fevil.example&pageSize=5".utf8),
                contentType: "application/x-www-form-urlencoded")
            #expect(missing.status == 403, "\(path) without a token: HTTP \(missing.status)")
            let wrong = try await harness.send(
                .post, path, body: Data("_csrf=forged&text=forged".utf8),
                contentType: "application/x-www-form-urlencoded",
                headers: [CSRFProtection.headerName: "forged"])
            #expect(wrong.status == 403, "\(path) with a wrong token: HTTP \(wrong.status)")
        }
        #expect(try harness.snapshot() == before)
        await harness.stop()
    }

    @Test func foreignHostNamesAreRefused() async throws {
        let harness = try await Harness()
        let port = harness.dashboard.server.port
        for host in [
            "attacker.example", "127.0.0.1.attacker.example:\(port)", "localhost.attacker.example", "evil:\(port)", "",
        ] {
            let answer = try await RawHTTP.send(
                port: port, "GET / HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(
                answer.hasPrefix("HTTP/1.1 421") || (host.isEmpty && answer.hasPrefix("HTTP/1.1 400")),
                "Host '\(host)': \(answer.prefix(40))")
        }
        let post = try await RawHTTP.send(
            port: port,
            "POST /items HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\nConnection: close\r\n\r\ntext=forge"
        )
        #expect(post.hasPrefix("HTTP/1.1 421"))
        #expect(try harness.dashboard.context.table("todoitem").count() == 0)
        await harness.stop()
    }
}
