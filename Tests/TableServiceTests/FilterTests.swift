import Foundation
import Testing

/// `$filter` over real rows: valid filters select the expected rows, invalid ones are a 400 that
/// says where, and values never reach the SQL text.
@Suite struct FilterTests {
    static var rows: [[String: Any]] {
        [
            ["id": "a", "text": "Buy milk", "complete": false, "priority": 1],
            ["id": "b", "text": "buy Bread", "complete": true, "priority": 2],
            ["id": "c", "text": "O'Brien's list", "complete": false, "priority": NSNull()],
            ["id": "d", "text": "Walk dog", "complete": true, "priority": 3.5],
            ["id": "e", "complete": false, "priority": 5],
        ]
    }

    /// Runs `body` with a server holding ``rows``, then stops the server.
    static func withSeededServer(_ backend: Backend, _ body: (TestServer) async throws -> Void) async throws {
        try await withTestServer(backend) { server in
            for row in rows {
                let reply = try await server.send(.post, "/tables/todoitem", json: row)
                #expect(reply.status == 201)
            }
            try await body(server)
        }
    }

    static func ids(_ server: TestServer, _ filter: String, extra: String = "") async throws -> (Int, [String], String)
    {
        let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let reply = try await server.send(.get, "/tables/todoitem?$filter=\(encoded)&$orderby=id\(extra)")
        return (reply.status, (reply.array ?? []).compactMap { $0["id"] as? String }, reply.text)
    }

    static let valid: [(String, [String])] = [
        ("text eq 'Buy milk'", ["a"]),
        ("text ne 'Buy milk'", ["b", "c", "d", "e"]),
        ("priority gt 1", ["b", "d", "e"]),
        ("priority ge 2 and priority lt 5", ["b", "d"]),
        ("priority le 1 or priority eq 5", ["a", "e"]),
        ("priority eq null", ["c"]),
        ("priority ne null", ["a", "b", "d", "e"]),
        ("text eq null", ["e"]),
        ("complete eq true", ["b", "d"]),
        ("complete", ["b", "d"]),
        ("not complete", ["a", "c", "e"]),
        ("not (priority gt 1)", ["a", "c"]),
        ("(complete eq false) and (priority gt 0)", ["a", "e"]),
        ("startswith(text, 'Buy')", ["a"]),
        ("startswith(tolower(text), 'buy')", ["a", "b"]),
        ("endswith(text, 'dog')", ["d"]),
        ("substringof('ilk', text)", ["a"]),
        ("contains(text, 'Bre')", ["b"]),
        ("toupper(text) eq 'WALK DOG'", ["d"]),
        ("text eq 'O''Brien''s list'", ["c"]),
        ("priority eq 3.5", ["d"]),
        ("priority eq 35e-1", ["d"]),
        ("priority gt -1 and priority lt 2L", ["a"]),
        ("length(text) eq 8", ["a", "d"]),
        ("indexof(text, 'milk') eq 4", ["a"]),
        ("startswith(text,'Buy') eq true", ["a"]),
        ("id gt 'c'", ["d", "e"]),
        ("updatedAt gt datetimeoffset'2000-01-01T00:00:00Z'", ["a", "b", "c", "d", "e"]),
        ("createdAt lt datetimeoffset'2000-01-01T00:00:00.000+01:00'", []),
        ("updatedAt ge '2000-01-01T00:00:00.000Z'", ["a", "b", "c", "d", "e"]),
        ("deleted eq false", ["a", "b", "c", "d", "e"]),
        ("TEXT eq 'Buy milk' AND Priority eq 1", ["a"]),
        ("priority add 1 eq 2", ["a"]),
        ("priority mul 2 gt 6", ["d", "e"]),
        ("priority sub 1 div 2.0 eq 0.5", ["a"]),
        ("priority sub 1 div 2 eq 1", ["a"]),
        ("(priority sub 1) div 2 eq 0.5", ["b"]),
        ("priority div 2 eq 0.5", ["a"]),
        ("floor(priority) eq 3 and ceiling(priority) eq 4", ["d"]),
        ("id in ('a', 'c', 'zz')", ["a", "c"]),
        ("updatedAt gt cast(2000-01-01T00:00:00Z,Edm.DateTimeOffset)", ["a", "b", "c", "d", "e"]),
    ]

    @Test(arguments: Backend.all) func validFiltersSelectTheExpectedRows(_ backend: Backend) async throws {
        try await Self.withSeededServer(backend) { server in
            for (filter, expected) in Self.valid {
                let (status, ids, body) = try await Self.ids(server, filter)
                #expect(status == 200, "\(filter): \(body)")
                #expect(ids == expected, "\(filter)")
            }
        }
    }

    static let invalid = [
        "updatedAt gee 1", "text eq", "eq 'a'", "(text eq 'a'", "text eq 'a')", "text eq 'unclosed",
        "nosuch eq 1", "startswith(text)", "startswith(text, 'a', 'b')", "frobnicate(text)", "text eq 'a' and",
        "text eq 'a' or or text eq 'b'", "priority gt 'a'", "text gt 1", "complete eq 'yes'",
        "updatedAt gt datetimeoffset'yesterday'", "updatedAt gt 'not a date'", "priority gt null", "text",
        "priority", "1", "'a'", "text eq 'a' text eq 'b'", "text eq #", "text ; DROP TABLE todoitem",
        "startswith(priority, 'a')", "text eq binary'AA'", "", String(repeating: "(", count: 100) + "complete",
        "not", "text eq 1.2.3", "text add 1 eq 2", "year(text) eq 1", "priority eq cast(1,Edm.Int32)",
        "id in 'a'", "priority - 1 eq 0", "hour(updatedAt) eq 1", "floor(text) eq 1",
    ]

    @Test(arguments: Backend.all) func invalidFiltersAreABadRequestSayingWhere(_ backend: Backend) async throws {
        try await Self.withSeededServer(backend) { server in
            #expect(Self.invalid.count >= 30)
            for filter in Self.invalid where !filter.isEmpty {
                let (status, _, body) = try await Self.ids(server, filter)
                #expect(status == 400, "\(filter) → \(status) \(body)")
                #expect(body.contains("\"error\""), "\(filter)")
            }
            let (status, _, body) = try await Self.ids(server, "updatedAt gee 1")
            #expect(status == 400)
            #expect(body.contains("position 10"))
            // An empty $filter is no filter.
            let (emptyStatus, all, _) = try await Self.ids(server, "")
            #expect(emptyStatus == 200)
            #expect(all.count == 5)
        }
    }

    @Test(arguments: Backend.all) func injectionAttemptsMatchNothingExtraAndLeaveTheDatabaseIntact(
        _ backend: Backend
    ) async throws {
        try await Self.withSeededServer(backend) { server in
            let attempts = [
                "text eq ''; DROP TABLE todoitem; --'", "text eq '') or 1=1 --'", "text eq 'x'' or ''1''=''1'",
                "id eq 'a\" OR \"1\"=\"1'", "text eq 'Buy milk'' --'",
            ]
            for attempt in attempts {
                let (status, ids, body) = try await Self.ids(server, attempt)
                #expect(ids.isEmpty, "\(attempt) → \(status) \(body)")
            }
            for attempt in ["') or 1=1 --", "'; DROP TABLE todoitem; --", "text eq 'a'; DROP TABLE todoitem"] {
                let (status, ids, _) = try await Self.ids(server, attempt)
                #expect(status == 400)
                #expect(ids.isEmpty)
            }
            let orderInjection = try await server.send(.get, "/tables/todoitem?$orderby=id;DROP%20TABLE%20todoitem")
            #expect(orderInjection.status == 400)
            let all = try await server.send(.get, "/tables/todoitem")
            #expect(all.array?.count == 5)
        }
    }

    @Test(arguments: Backend.all) func unknownColumnsInOrderbyAndSelectAreABadRequest(_ backend: Backend) async throws {
        try await Self.withSeededServer(backend) { server in
            #expect(try await server.send(.get, "/tables/todoitem?$orderby=nosuch").status == 400)
            #expect(try await server.send(.get, "/tables/todoitem?$orderby=text%20sideways").status == 400)
            #expect(try await server.send(.get, "/tables/todoitem?$select=id,nosuch").status == 400)
            let selected = try await server.send(.get, "/tables/todoitem?$select=id,text&$orderby=priority%20desc")
            #expect(selected.array?.first?.keys.sorted() == ["id", "text"])
            #expect(selected.array?.first?["id"] as? String == "e")
        }
    }
}
