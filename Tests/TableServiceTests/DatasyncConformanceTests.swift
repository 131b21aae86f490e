import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import Testing

/// Every case of the official Datasync v3 query tests (`Fixtures/DatasyncV3/query-cases.json`: 337
/// of 339, without the two on `kitchensink_countries`) against `todosync serve` seeded with their
/// data, on each backend: status, item count, total, `nextLink` and first ids, as the README of the
/// fixtures says CTK asserts them. Each case is its own test case, named after it; the services are
/// seeded once for the suite (``SeededDatasyncServices``).
@Suite("Datasync v3 conformance cases", .seededDatasyncServices)
struct DatasyncConformanceTests {
    /// movies.json by id.
    static func movies() throws -> [String: [String: Any]] {
        let rows = try DatasyncFixtures.rows("movies.json")
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["id"] as? String).map { ($0, row) } })
    }

    @Test("All 337 cases with data here are run (339 less the 2 on kitchensink_countries)")
    func everyCaseWithDataIsRun() throws {
        #expect(try DatasyncFixtures.cases().count == 337)
        #expect(try Self.movies().count == 248)
    }

    @Test(
        "Each query, paging, select and failure case gives the official answer",
        arguments: Backend.all, try DatasyncFixtures.cases())
    func caseGivesTheOfficialAnswer(backend: Backend, queryCase: DatasyncFixtures.QueryCase) async throws {
        let server = try #require(SeededDatasyncServices.servers[backend], "the suite seeds a service per backend")
        let failures: [String]
        switch queryCase.kind {
        case "paging": failures = try await checkPaging(queryCase, server)
        case "select": failures = try await checkSelect(queryCase, server)
        case "failure": failures = try await checkFailure(queryCase, server)
        default: failures = try await checkQuery(queryCase, server, movies: try Self.movies())
        }
        for failure in failures { Issue.record("\(queryCase.name) (\(queryCase.query)): \(failure)") }
    }

    private func get(
        _ queryCase: DatasyncFixtures.QueryCase, _ query: String, _ server: TestServer
    ) async throws
        -> TestServer.Reply
    {
        let target = "/tables/\(queryCase.table)" + (query.isEmpty ? "" : "?" + DatasyncFixtures.encoded(query))
        return try await server.send(.get, target, headers: DatasyncFixtures.v3)
    }

    private func checkQuery(
        _ queryCase: DatasyncFixtures.QueryCase, _ server: TestServer, movies: [String: [String: Any]]
    ) async throws -> [String] {
        let reply = try await get(queryCase, queryCase.query, server)
        guard reply.status == queryCase.status else {
            return ["status \(reply.status), expected \(queryCase.status): \(reply.text)"]
        }
        guard let page = reply.object, let items = page["items"] as? [[String: Any]] else {
            return ["the body is not {items, count, nextLink}: \(reply.text)"]
        }
        var failures: [String] = []
        if items.count != queryCase.expectedCount {
            failures.append("\(items.count) items, expected \(queryCase.expectedCount ?? 0)")
        }
        let count = page["count"] as? Int
        if count != queryCase.expectedTotal {
            failures.append(
                "count \(count.map(String.init) ?? "null"), expected \(queryCase.expectedTotal.map(String.init) ?? "null")"
            )
        }
        failures += nextLinkFailures(page["nextLink"] as? String, queryCase)
        let ids = items.prefix(queryCase.firstItems.count).map { $0["id"] as? String ?? "?" }
        if ids != queryCase.firstItems {
            failures.append("first ids \(ids), expected \(queryCase.firstItems)")
        }
        for item in items.prefix(queryCase.firstItems.count) {
            failures += systemFieldFailures(item)
            if queryCase.table.hasSuffix("movies"), let id = item["id"] as? String, let movie = movies[id] {
                for (key, value) in movie where key != "deleted" && !same(value, item[key]) {
                    failures.append("\(id).\(key) is \(item[key] ?? "missing"), expected \(value)")
                }
            }
        }
        return failures
    }

    /// Whether two JSON values read by JSONSerialization are equal.
    private func same(_ expected: Any, _ actual: Any?) -> Bool {
        guard let actual else { return false }
        return (expected as? NSObject)?.isEqual(actual as? NSObject) ?? false
    }

    private func nextLinkFailures(_ link: String?, _ queryCase: DatasyncFixtures.QueryCase) -> [String] {
        guard let expected = queryCase.expectedNextLink else {
            return link == nil ? [] : ["nextLink \(link!), expected null"]
        }
        guard let link else { return ["nextLink null, expected \(expected)"] }
        if link.contains("://") || link.hasPrefix("?") || link.hasPrefix("/") {
            return ["nextLink \(link) is not a bare query string"]
        }
        switch queryCase.nextLinkMatch {
        case "exact":
            let decoded = link.removingPercentEncoding ?? link
            return decoded == expected ? [] : ["nextLink \(decoded), expected exactly \(expected)"]
        default:
            return DatasyncFixtures.parameters(link) == DatasyncFixtures.parameters(expected)
                ? [] : ["nextLink \(link), expected the parameters of \(expected)"]
        }
    }

    /// `updatedAt` with exactly 3 fractional digits in UTC, `version` as base64, `deleted` a boolean.
    private func systemFieldFailures(_ item: [String: Any]) -> [String] {
        var failures: [String] = []
        let updatedAt = item["updatedAt"] as? String ?? ""
        if updatedAt.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) == nil {
            failures.append("updatedAt '\(updatedAt)' is not yyyy-MM-ddTHH:mm:ss.fffZ")
        }
        let version = item["version"] as? String ?? ""
        if version.isEmpty || Data(base64Encoded: version) == nil {
            failures.append("version '\(version)' is not base64")
        }
        if !(item["deleted"] is Bool) { failures.append("deleted is not a boolean") }
        if item["createdAt"] != nil { failures.append("v3 items have no createdAt") }
        return failures
    }

    private func checkPaging(_ queryCase: DatasyncFixtures.QueryCase, _ server: TestServer) async throws -> [String] {
        var query = queryCase.query
        var ids: [String] = []
        var pages = 0
        while pages <= (queryCase.expectedPages ?? 0) {
            let reply = try await get(queryCase, query, server)
            pages += 1
            guard reply.status == 200, let page = reply.object, let items = page["items"] as? [[String: Any]] else {
                return ["page \(pages): \(reply.status) \(reply.text)"]
            }
            ids += items.compactMap { $0["id"] as? String }
            guard let next = page["nextLink"] as? String else { break }
            // The link is sent as it came (already percent-encoded).
            query = next.removingPercentEncoding ?? next
        }
        var failures: [String] = []
        if pages != queryCase.expectedPages {
            failures.append("\(pages) pages, expected \(queryCase.expectedPages ?? 0)")
        }
        if ids.count != queryCase.expectedItems {
            failures.append("\(ids.count) items, expected \(queryCase.expectedItems ?? 0)")
        }
        if Set(ids).count != ids.count { failures.append("an id came twice") }
        return failures
    }

    private func checkSelect(_ queryCase: DatasyncFixtures.QueryCase, _ server: TestServer) async throws -> [String] {
        let reply = try await get(queryCase, queryCase.query, server)
        guard reply.status == 200, let items = reply.object?["items"] as? [[String: Any]], !items.isEmpty else {
            return ["\(reply.status) \(reply.text)"]
        }
        let expected = Set(queryCase.expectedKeys ?? [])
        return items.compactMap { item in
            Set(item.keys) == expected ? nil : "keys \(item.keys.sorted()), expected \(expected.sorted())"
        }
    }

    private func checkFailure(_ queryCase: DatasyncFixtures.QueryCase, _ server: TestServer) async throws -> [String] {
        let reply = try await get(queryCase, queryCase.query, server)
        guard reply.status == 400 else { return ["status \(reply.status), expected 400: \(reply.text)"] }
        return (reply.object?["error"] as? String)?.isEmpty == false ? [] : ["the 400 has no message: \(reply.text)"]
    }
}

/// Seeds one service per backend with the conformance data before the suite's tests run, hands
/// them to the tests in a task-local, and stops them when the suite is done.
struct SeededDatasyncServices: SuiteTrait, TestScoping {
    @TaskLocal static var servers: [Backend: TestServer] = [:]

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        var servers: [Backend: TestServer] = [:]
        do {
            for backend in Backend.all { servers[backend] = try await DatasyncFixtures.seededService(backend) }
            try await Self.$servers.withValue(servers) { try await function() }
        } catch {
            for server in servers.values { await server.stop() }
            throw error
        }
        for server in servers.values { await server.stop() }
    }
}

extension Trait where Self == SeededDatasyncServices {
    /// The conformance suite's seeded services (see ``SeededDatasyncServices``).
    static var seededDatasyncServices: Self { Self() }
}
