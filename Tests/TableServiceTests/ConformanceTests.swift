import Foundation
import HTTPTypes
import SyncProtocol
import Testing

@testable import TableService

/// Replays the official server's captured exchanges, in capture order, against one fresh service
/// whose clock follows the capture's timeline, and checks the same status and a body of the same
/// shape and values (versions are opaque: they are translated, not compared). The points where we
/// are deliberately stricter are checked for our behaviour instead, and have their own tests.
@Suite struct ConformanceTests {
    /// Capture times have whole seconds; within one second, the exchanges that change or reveal
    /// state ran in this order (deduced from the versions and timestamps in their bodies).
    static let orderWithinASecond = [
        "200-patch-correct-if-match", "412-patch-stale-if-match", "412-patch-stale-if-match-unquoted",
        "409-patch-stale-version-in-body-no-if-match", "200-patch-correct-if-match-unquoted",
        "200-patch-no-if-match", "200-get-by-id-after-patches",
        "412-delete-stale-if-match", "200-delete-correct-if-match-soft", "200-get-list-after-delete",
        "200-get-list-after-delete-includeDeleted", "404-get-by-id-soft-deleted",
        "404-get-by-id-soft-deleted-includeDeleted", "404-delete-again-soft-deleted", "404-patch-soft-deleted",
        "409-post-insert-id-of-soft-deleted", "201-post-undelete", "200-get-list-after-undelete",
        "201-post-with-client-version", "200-patch-legacy-__version-body",
        "409-patch-stale-version-in-body-no-if-match-2", "200-delete-if-match-unquoted-current",
        "200-delete-no-if-match", "200-get-list-final-includeDeleted-inlinecount",
    ]

    static func exchangesInCaptureOrder() throws -> [ReferenceExchange] {
        try ReferenceExchange.loadAll().sorted { left, right in
            if left.captured != right.captured { return left.captured < right.captured }
            let leftRank = orderWithinASecond.firstIndex(of: left.name) ?? Int.max
            let rightRank = orderWithinASecond.firstIndex(of: right.name) ?? Int.max
            return leftRank != rightRank ? leftRank < rightRank : left.name < right.name
        }
    }

    @Test func referenceFolderHoldsTheCapturedExchanges() throws {
        let exchanges = try ReferenceExchange.loadAll()
        #expect(exchanges.count >= 49)
        let names = Set(exchanges.map(\.name))
        for name in Self.orderWithinASecond { #expect(names.contains(name), "\(name) is no longer in the folder") }
    }

    @Test(arguments: Backend.all) func replayingTheCapturedSessionGivesTheSameAnswers(_ backend: Backend) async throws {
        // The reference ran with its default CORS setting, which lets pages on localhost call it.
        let localhost = try #require(WebOrigin("http://localhost"))
        try await withTestServer(
            backend, controlledClock: true, configure: { $0.allowedOrigins = [localhost] }
        ) { server in
            var replay = Replay()
            var replayed = 0
            for exchange in try Self.exchangesInCaptureOrder() {
                // Requests without ZUMO-API-VERSION get legacy answers: LegacyProtocolTests.
                guard exchange.hasAPIVersion || exchange.method == "OPTIONS" else { continue }
                server.clock.now = replay.clock(for: exchange)
                let request = replay.translate(exchange)
                let reply = try await server.send(
                    try #require(HTTPRequest.Method(exchange.method)), request.target, headers: request.headers,
                    body: request.body)
                let problems = replay.check(exchange, reply)
                replayed += 1
                #expect(problems.isEmpty, "\(exchange.name): \(problems.joined(separator: "; "))\n ours: \(reply.text)")
            }
            #expect(replayed == 46)
            #expect(replay.ids.count == 1)
        }
    }
}

/// The state of a replay: how the reference's server-made ids and opaque versions map to ours,
/// and which columns the replayed requests have created.
struct Replay {
    var ids: [String: String] = [:]
    /// "refID|refVersion" → our version.
    var versions: [String: String] = [:]
    var writtenKeys: Set<String> = Set(SystemColumn.all)

    /// The reference server's clock for this exchange: the `updatedAt` its write produced, or the capture time.
    func clock(for exchange: ReferenceExchange) -> Int64 {
        if ["POST", "PATCH", "DELETE"].contains(exchange.method), (200..<300).contains(exchange.status),
            case .object(let item)? = Self.decode(exchange.response.body),
            let updatedAt = item["updatedAt"]?.stringValue, let milliseconds = ProtocolDate.parse(updatedAt)
        {
            return milliseconds
        }
        return ProtocolDate.parse(exchange.captured)!
    }

    /// The request with the reference's ids and versions replaced by ours.
    mutating func translate(_ exchange: ReferenceExchange) -> (target: String, headers: HTTPFields, body: Data?) {
        var target = exchange.target
        for (reference, ours) in ids { target = target.replacingOccurrences(of: reference, with: ours) }
        let pathID = Self.pathID(exchange.target)
        var headers = HTTPFields()
        for (name, value) in exchange.request.headers {
            guard let name = HTTPField.Name(name), name.canonicalName != "host",
                ![.contentLength, .userAgent, .connection].contains(name)
            else { continue }
            headers.append(HTTPField(name: name, value: value))
        }
        if let ifMatch = headers[.ifMatch], let id = pathID {
            let quoted = ifMatch.hasPrefix("\"")
            let bare = quoted ? String(ifMatch.dropFirst().dropLast()) : ifMatch
            if let mapped = versions["\(id)|\(bare)"] { headers[.ifMatch] = quoted ? "\"\(mapped)\"" : mapped }
        }
        var body: Data? = exchange.request.body.isEmpty ? nil : Data(exchange.request.body.utf8)
        if case .object(var object)? = Self.decode(exchange.request.body) {
            writtenKeys.formUnion(object.keys)
            let id = pathID ?? object["id"]?.stringValue
            if let version = object["version"]?.stringValue, let id, let mapped = versions["\(id)|\(version)"] {
                object["version"] = .string(mapped)
                body = try? JSONEncoder().encode(JSONValue.object(object))
            }
        }
        return (target, headers, body)
    }

    /// What differs between the reference's answer and ours (empty when they agree), learning the
    /// id and version correspondences on the way.
    mutating func check(_ exchange: ReferenceExchange, _ reply: TestServer.Reply) -> [String] {
        var problems: [String] = []
        let reference = Self.decode(exchange.response.body)
        let ours = Self.decode(String(decoding: reply.body, as: UTF8.self))

        // Where we are stricter on purpose.
        if exchange.status == 500 {
            if reply.status != 400 { problems.append("malformed filter: status \(reply.status), expected 400") }
            if !(ours?.objectValue?["error"]?.stringValue ?? "").contains("position") {
                problems.append("malformed filter: the message does not say where")
            }
            return problems
        }
        if exchange.status == 409, exchange.method == "POST" {
            if reply.status != 409 { problems.append("duplicate insert: status \(reply.status), expected 409") }
            guard case .object(let item)? = ours else { return problems + ["duplicate insert: body is not an object"] }
            for key in SystemColumn.all where item[key] == nil {
                problems.append("duplicate insert: no \(key) in body")
            }
            if reply.header("ETag") == nil { problems.append("duplicate insert: no ETag") }
            return problems
        }

        if reply.status != exchange.status { problems.append("status \(reply.status), expected \(exchange.status)") }
        if let etag = exchange.response.header("ETag"), !etag.hasPrefix("W/") {
            if !(reply.header("ETag")?.hasPrefix("\"") ?? false) { problems.append("no quoted ETag") }
        }
        if exchange.response.header("Link") != nil {
            let link = reply.header("Link") ?? ""
            if !(link.hasPrefix("<http://") && link.hasSuffix(">; rel=next") && link.contains("$skip=")) {
                problems.append("Link '\(link)' is not an absolute next link")
            }
        }
        if let origin = exchange.response.header("Access-Control-Allow-Origin"),
            reply.header("Access-Control-Allow-Origin") != origin
        {
            problems.append(
                "Access-Control-Allow-Origin is \(reply.header("Access-Control-Allow-Origin") ?? "missing")")
        }
        guard let reference else { return problems }  // not JSON (an HTML 404 page, a preflight's text)
        guard let ours else { return problems + ["our body is not JSON"] }
        if exchange.method == "POST", exchange.status == 201,
            case .object(let sent)? = Self.decode(exchange.request.body),
            sent["id"] == nil, let referenceID = reference.objectValue?["id"]?.stringValue,
            let ourID = ours.objectValue?["id"]?.stringValue
        {
            ids[referenceID] = ourID
        }
        compare(reference, ours, path: "body", into: &problems)
        // Columns come in the order the official server made them (the order clients first sent them).
        if let expected = try? OrderedJSONParser.object(Array(exchange.response.body.utf8)).map(\.name),
            let actual = try? OrderedJSONParser.object(Array(reply.body)).map(\.name)
        {
            let comparable = expected.filter { actual.contains($0) }
            if comparable != actual { problems.append("keys in order \(actual), expected \(comparable)") }
        }
        learnVersions(reference, ours)
        return problems
    }

    private func compare(_ reference: JSONValue, _ ours: JSONValue, path: String, into problems: inout [String]) {
        switch (reference, ours) {
        case (.object(let expected), .object(let actual)):
            for key in Set(expected.keys).union(actual.keys).sorted() {
                switch (expected[key], actual[key]) {
                case (let value?, nil):
                    // A column the reference database got from a request that was not captured.
                    if !(value == .null && !writtenKeys.contains(key)) { problems.append("\(path).\(key) is missing") }
                case (nil, _?):
                    problems.append("\(path).\(key) is extra")
                case (let expectedValue?, let actualValue?):
                    if key == "version" {
                        if actualValue.stringValue == nil { problems.append("\(path).version is not a string") }
                    } else if key == "id", let expectedID = expectedValue.stringValue {
                        if actualValue.stringValue != (ids[expectedID] ?? expectedID) {
                            problems.append("\(path).id is \(actualValue), expected \(expectedID)")
                        }
                    } else {
                        compare(expectedValue, actualValue, path: "\(path).\(key)", into: &problems)
                    }
                case (nil, nil):
                    break
                }
            }
        case (.array(let expected), .array(let actual)):
            guard expected.count == actual.count else {
                return problems.append("\(path) has \(actual.count) elements, expected \(expected.count)")
            }
            for (index, pair) in zip(expected, actual).enumerated() {
                compare(pair.0, pair.1, path: "\(path)[\(index)]", into: &problems)
            }
        default:
            if reference != ours { problems.append("\(path) is \(ours), expected \(reference)") }
        }
    }

    private mutating func learnVersions(_ reference: JSONValue, _ ours: JSONValue) {
        switch (reference, ours) {
        case (.object(let expected), .object(let actual)):
            if let id = expected["id"]?.stringValue, let version = expected["version"]?.stringValue,
                let ourVersion = actual["version"]?.stringValue
            {
                versions["\(id)|\(version)"] = ourVersion
            }
            if let results = expected["results"], let ourResults = actual["results"] {
                learnVersions(results, ourResults)
            }
        case (.array(let expected), .array(let actual)):
            for (left, right) in zip(expected, actual) { learnVersions(left, right) }
        default:
            break
        }
    }

    static func decode(_ text: String) -> JSONValue? {
        guard !text.isEmpty else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// The item id of `/tables/{table}/{id}`, percent-decoded.
    static func pathID(_ target: String) -> String? {
        let path = target.split(separator: "?", maxSplits: 1)[0]
        let segments = path.split(separator: "/")
        guard segments.count == 3 else { return nil }
        return String(segments[2]).removingPercentEncoding
    }
}
