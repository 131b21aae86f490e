import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import TestSupport
import Testing

/// The patterns `/openapi.json` gives values take what the service takes and refuse what it
/// refuses (schemathesis generates requests from them: see `Tests/Browser/test_published_contract.py`).
@Suite("Published contract patterns")
struct PublishedContractPatternTests {
    static let v3 = PublishedContractTests.v3

    /// The document's pattern at `keys` (objects by name, parameter lists by the name of the parameter).
    static func pattern(_ server: TestServer, _ keys: [String]) async throws -> String {
        var node: Any? = try await server.send(.get, "/openapi.json", headers: v3).object
        for key in keys {
            if let list = node as? [[String: Any]] {
                node = list.first { $0["name"] as? String == key }
            } else {
                node = (node as? [String: Any])?[key]
            }
        }
        return try #require(node as? String, "\(keys)")
    }

    static func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }

    @Test("A time of day is documented without an offset, as the service takes and answers it")
    func timeOfDayPatternIsTheService() async throws {
        let json = #"{"shows": {"columns": {"starts": "time-of-day"}}}"#
        try await withTestServer(configure: { $0.schema = try! ServiceSchema(json: Data(json.utf8)) }) { server in
            let pattern = try await Self.pattern(
                server, ["components", "schemas", "shows", "properties", "starts", "pattern"])
            for (text, taken) in [
                ("02:14", true), ("02:14:05", true), ("23:59:59.1234", true), ("02:14Z", false),
                ("24:00", false), ("02:14:05+01:00", false),
            ] {
                let reply = try await server.send(
                    .post, "/tables/shows", json: ["id": "s-" + text, "starts": text], headers: Self.v3)
                #expect((reply.status == 201) == taken, "\(text): \(reply.text)")
                #expect(Self.matches(text, pattern) == taken, "\(text) against \(pattern)")
                if let answered = reply.object?["starts"] as? String { #expect(Self.matches(answered, pattern)) }
            }
        }
    }

    @Test("An empty $filter and a bare boolean are in the documented pattern and answered 200")
    func filterPatternTakesWhatTheServiceTakes() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            let pattern = try await Self.pattern(
                server, ["paths", "/tables/todoitem", "get", "parameters", "$filter", "schema", "pattern"])
            for filter in ["", "true", "false and true", "updatedAt lt 2023-02-28T00:00:00.000Z"] {
                #expect(Self.matches(filter, pattern), "\(filter)")
                let query = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                #expect(
                    try await server.send(.get, "/tables/todoitem?$filter=\(query)", headers: Self.v3).status == 200)
            }
            #expect(!Self.matches("updatedAt lt 2023-02-29T00:00:00.000Z", pattern), "no 29 February in a common year")
        }
    }

    @Test("The change channel's cursors match the documented pattern; OPTIONS allows GET and HEAD")
    func changeChannelIsAsDocumented() async throws {
        try await withTestServer(tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            let path = "/tables/todoitem/$changes"
            let pattern = try await Self.pattern(
                server, ["paths", path, "get", "parameters", "cursor", "schema", "pattern"])
            let cursor = try #require(try await server.send(.get, path, headers: Self.v3).object?["cursor"] as? String)
            #expect(Self.matches(cursor, pattern) && Self.matches("0", pattern))
            for text in ["", "1.A", "1.YQ==", "1234567890123456789"] {
                #expect(!Self.matches(text, pattern), "\(text)")
            }
            let options = try await server.send(.options, path, headers: Self.v3)
            #expect(options.header("Allow") == "GET,HEAD")
            // Last-Event-ID is read by streams only, and checked on every request.
            let malformed = try await server.send(
                .get, path, headers: [ProtocolHeader.apiVersion: "3.0.0", HTTPField.Name("Last-Event-ID")!: "x y"])
            #expect(malformed.status == 400)
        }
    }
}
