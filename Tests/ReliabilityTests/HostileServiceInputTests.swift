import Foundation
import HTTPTypes
import SyncProtocol
import Testing

/// The table service under hostile input: generated and mutated `$filter`s, broken bodies,
/// unknown tables and columns. Only 2xx/4xx answers with a message, never a 5xx or a crash,
/// and nothing stored by reads or by refused writes.
@Suite struct HostileServiceInputTests {
    /// Runs `body` with a service holding a few rows (one soft-deleted), then stops the service.
    private func withSeededHarness(_ body: (ReliabilityHarness) async throws -> Void) async throws {
        try await withReliabilityHarness { harness in
            for index in 0..<6 {
                let body = #"{"id":"r\#(index)","text":"row \#(index)","complete":\#(index % 2 == 0)}"#
                #expect(try await harness.send(.post, "/tables/todoitem", body: Data(body.utf8)).status == 201)
            }
            #expect(try await harness.send(.delete, "/tables/todoitem/r5").status == 200)
            try await body(harness)
        }
    }

    private static func encode(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        allowed.insert(charactersIn: "$")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    @Test func tenThousandGeneratedAndMutatedFiltersAnswer200Or400AndChangeNothing() async throws {
        try await withSeededHarness { harness in
            let before = try await harness.serviceRows()
            let count = Int(ProcessInfo.processInfo.environment["FILTER_FUZZ_COUNT"] ?? "") ?? 10_000
            let seed = UInt64(ProcessInfo.processInfo.environment["FILTER_FUZZ_SEED"] ?? "") ?? 20261122
            let workers = 4
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        var generator = HostileFilterGenerator(seed: seed &+ UInt64(worker))
                        var failures: [String] = []
                        for index in stride(from: worker, to: count, by: workers) {
                            let filter = generator.filter(index)
                            var target = "/tables/todoitem?$filter=" + Self.encode(filter) + "&$top=5"
                            if index % 7 == 0 {
                                target +=
                                    "&$orderby="
                                    + Self.encode(["text desc", "nosuch", "id,,", "text asc desc"][index % 4])
                            }
                            if index % 11 == 0 {
                                target += "&$select=" + Self.encode(["text,id", "nosuch", "*", ""][index % 4])
                            }
                            if index % 13 == 0 {
                                target += "&$skip=" + ["-1", "99999999999999999999", "x", "3"][index % 4]
                            }
                            if index % 17 == 0 { target += "&$filter=%FF%FE" }  // invalid UTF-8
                            // A thrown error must not cancel the other workers: record it and go on.
                            let reply: (status: Int, body: Data)
                            do { reply = try await harness.get(target) } catch {
                                // Over its memory limit libmicrohttpd may answer 414/431 and close before
                                // reading the rest: the client sees the connection drop. Not a crash.
                                if target.utf8.count > 16_384 { continue }
                                failures.append(
                                    "seed \(seed &+ UInt64(worker)) #\(index): \(error) for \(filter.prefix(200).debugDescription)"
                                )
                                continue
                            }
                            let message = (try? JSONDecoder().decode([String: JSONValue].self, from: reply.body))?[
                                "error"]
                            if reply.status == 200 { continue }
                            if reply.status == 400, message?.stringValue?.isEmpty == false { continue }
                            // libmicrohttpd refuses a request line over its memory limit (~32 KiB) itself.
                            if [414, 431].contains(reply.status), target.utf8.count > 16_384 { continue }
                            failures.append(
                                "seed \(seed &+ UInt64(worker)) #\(index): HTTP \(reply.status) for \(filter.prefix(200).debugDescription): \(String(decoding: reply.body.prefix(200), as: UTF8.self))"
                            )
                        }
                        return failures
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(
                failures.isEmpty, "\(failures.count) bad answers; first: \(failures.prefix(5).joined(separator: "\n"))")
            #expect(try await harness.serviceRows() == before, "reads changed the database")
            #expect(try await harness.get("/tables/todoitem?$filter=text%20eq%20'row%201'").status == 200)
        }
    }

    /// A hostile request, and the statuses it may get.
    struct HostileRequest: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var body: Data?
        var allowed: Set<Int>
        var label: String
        var description: String { label }
    }

    static let hostileRequests: [HostileRequest] = {
        func request(
            _ label: String, _ method: String, _ path: String, _ body: String?, _ allowed: Set<Int>
        ) -> HostileRequest {
            HostileRequest(method: method, path: path, body: body.map { Data($0.utf8) }, allowed: allowed, label: label)
        }
        var requests = [
            request("malformed JSON", "POST", "/tables/todoitem", #"{"text": "a""#, [400]),
            request("JSON array", "POST", "/tables/todoitem", #"[{"text":"a"}]"#, [400]),
            request("JSON string", "POST", "/tables/todoitem", #""text""#, [400]),
            request("empty body", "POST", "/tables/todoitem", "", [400]),
            request("trailing garbage", "POST", "/tables/todoitem", #"{"text":"a"} x"#, [400]),
            request("text as a number", "POST", "/tables/todoitem", #"{"id":"h1","text":5,"newcolumn":1}"#, [400]),
            request("complete as text", "POST", "/tables/todoitem", #"{"id":"h2","complete":"yes"}"#, [400]),
            request("nested object", "POST", "/tables/todoitem", #"{"id":"h3","text":{"a":1}}"#, [400]),
            request("deep nesting", "POST", "/tables/todoitem", String(repeating: "[", count: 100_000), [400]),
            request("id as a number", "POST", "/tables/todoitem", #"{"id":5}"#, [400]),
            request(
                "id too long", "POST", "/tables/todoitem", #"{"id":"\#(String(repeating: "i", count: 300))"}"#, [400]),
            request("id with control characters", "POST", "/tables/todoitem", #"{"id":"a\u0000b"}"#, [400]),
            request("column name with a quote", "POST", "/tables/todoitem", #"{"id":"h4","te\"xt":"a"}"#, [400]),
            request(
                "column name as SQL", "POST", "/tables/todoitem", #"{"id":"h5","a) ; DROP TABLE todoitem; --":"a"}"#,
                [400]),
            request(
                "reserved property", "POST", "/tables/todoitem", #"{"id":"h6","updatedAt":"2020-01-01T00:00:00Z"}"#,
                [400]),
            request(
                "duplicate names by case", "POST", "/tables/todoitem", #"{"id":"h7","text":"a","TEXT":"b"}"#, [400]),
            request("huge number", "POST", "/tables/todoitem", #"{"id":"h8","text":"a","n":1e999}"#, [400]),
            request("unknown table read", "GET", "/tables/nosuchtable", nil, [404]),
            request("bad table name", "GET", "/tables/no-such;table", nil, [400, 404]),
            request("unknown item", "GET", "/tables/todoitem/nosuch", nil, [404]),
            request("unknown column in $filter", "GET", "/tables/todoitem?$filter=nosuch%20eq%201", nil, [400]),
            request("unknown column in $orderby", "GET", "/tables/todoitem?$orderby=nosuch", nil, [400]),
            request("unknown column in $select", "GET", "/tables/todoitem?$select=nosuch", nil, [400]),
            request("$top too large", "GET", "/tables/todoitem?$top=100000", nil, [400]),
            request("$top not a number", "GET", "/tables/todoitem?$top=ten", nil, [400]),
            request("invalid UTF-8 in the path", "GET", "/tables/todoitem/%FF%FE", nil, [400]),
            request("patch with a wrong type", "PATCH", "/tables/todoitem/r0", #"{"text":true}"#, [400]),
            request("patch changing the id", "PATCH", "/tables/todoitem/r0", #"{"id":"other","text":"a"}"#, [400]),
            request("patch with malformed JSON", "PATCH", "/tables/todoitem/r0", "{", [400]),
            request(
                "1 MiB string", "POST", "/tables/todoitem",
                #"{"id":"h9","text":"\#(String(repeating: "m", count: 1 << 20))"}"#, [413]),
        ]
        requests.append(
            HostileRequest(
                method: "POST", path: "/tables/todoitem",
                body: Data(#"{"id":"h10","text":""#.utf8) + Data([0xFF, 0xFE, 0xC0]) + Data(#""}"#.utf8),
                allowed: [400],
                label: "invalid UTF-8 in the body"))
        return requests
    }()

    @Test func brokenBodiesUnknownTablesAndColumnsAre4xxWithAMessageAndStoreNothing() async throws {
        try await withSeededHarness { harness in
            let before = try await harness.serviceRows()
            for hostile in Self.hostileRequests {
                // A path that is not valid UTF-8 once decoded cannot go through an HTTP client's URL: raw bytes.
                let method = try #require(HTTPRequest.Method(hostile.method))
                let reply =
                    hostile.path.contains("%FF")
                    ? try await harness.sendRaw(method, hostile.path)
                    : try await harness.send(method, hostile.path, body: hostile.body)
                #expect(
                    hostile.allowed.contains(reply.status),
                    "\(hostile): HTTP \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
                let message = (try? JSONDecoder().decode([String: JSONValue].self, from: reply.body))?["error"]?
                    .stringValue
                #expect(message?.isEmpty == false, "\(hostile): no message")
            }
            #expect(try await harness.serviceRows() == before, "a refused request stored something")
            let sample = try await harness.get("/tables/todoitem/r0")
            let columns = try JSONDecoder().decode([String: JSONValue].self, from: sample.body).keys.sorted()
            #expect(columns == ["complete", "createdAt", "deleted", "id", "text", "updatedAt", "version"])
        }
    }
}
