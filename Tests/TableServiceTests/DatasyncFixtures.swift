import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import Testing

/// The Datasync v3 conformance data in `Fixtures/DatasyncV3` (official CommunityToolkit test data;
/// source and licence in its README) and a service seeded with it as the README says.
enum DatasyncFixtures {
    /// One case of `query-cases.json`.
    struct QueryCase: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let kind: String
        let table: String
        let query: String
        let status: Int
        let expectedCount: Int?
        let expectedTotal: Int?
        let expectedNextLink: String?
        let nextLinkMatch: String?
        let firstItems: [String]
        let expectedItems: Int?
        let expectedPages: Int?
        let expectedKeys: [String]?

        var testDescription: String { name }
    }

    private struct CaseFile: Decodable {
        let cases: [QueryCase]
    }

    /// A file of the fixtures folder.
    static func data(_ name: String) throws -> Data {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try Data(contentsOf: folder.appendingPathComponent("DatasyncV3").appendingPathComponent(name))
    }

    /// Every case, without the two on `kitchensink_countries`, whose data is not shipped.
    static func cases() throws -> [QueryCase] {
        try JSONDecoder().decode(CaseFile.self, from: data("query-cases.json")).cases
            .filter { $0.table != "kitchensink_countries" }
    }

    /// The rows of a dataset (`movies.json`, `kitchensink-dates.json`), as objects in file order.
    static func rows(_ name: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: data(name)) as? [[String: Any]])
    }

    /// The tables the cases run on, declared as `todosync serve --schema` reads them.
    static func schema() throws -> ServiceSchema {
        try ServiceSchema(json: data("schema.json"))
    }

    static let v3: HTTPFields = [ProtocolHeader.apiVersion: "3.0.0"]

    /// A service on `backend` with the declared tables, seeded through the v3 API: `movies` and
    /// `pagedmovies` with movies.json, `softmovies` with it and every R-rated movie then deleted,
    /// `kitchensink_dates` with kitchensink-dates.json.
    static func seededService(_ backend: Backend) async throws -> TestServer {
        let schema = try schema()
        let server = try await TestServer(backend) { $0.schema = schema }
        let movies = try rows("movies.json")
        for table in ["movies", "pagedmovies", "softmovies"] {
            try await insert(movies, into: table, on: server)
        }
        for movie in movies where movie["rating"] as? String == "R" {
            let id = try #require(movie["id"] as? String)
            let reply = try await server.send(.delete, "/tables/softmovies/\(id)", headers: v3)
            try #require(reply.status == 204, "deleting \(id): \(reply.status) \(reply.text)")
        }
        try await insert(try rows("kitchensink-dates.json"), into: "kitchensink_dates", on: server)
        return server
    }

    private static func insert(_ rows: [[String: Any]], into table: String, on server: TestServer) async throws {
        for row in rows {
            let reply = try await server.send(.post, "/tables/\(table)", json: row, headers: v3)
            try #require(reply.status == 201, "seeding \(table): \(reply.status) \(reply.text)")
        }
    }

    /// A case's query as .NET sends it: spaces (and any non-ASCII text) percent-encoded, `$ ' ( ) , :` literal.
    static func encoded(_ query: String) -> String {
        var output = ""
        for byte in query.utf8 {
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "%") {
                output += String(format: "%%%02X", byte)
            } else {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return output
    }

    /// A query string's parameters, percent-decoded (`+` as a space), as CTK's `MatchQueryString` reads them.
    static func parameters(_ query: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            result[decode(parts[0]), default: []].append(parts.count > 1 ? decode(parts[1]) : "")
        }
        return result.mapValues { $0.sorted() }
    }
}
