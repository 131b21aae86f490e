import Foundation
import GRDB
import TestSupport
import Testing

@testable import TableService

/// What a client is answered for each storage failure (`TableStorageFailure+HTTP.swift`): the
/// statuses and messages clients got before the failures were typed, and the same answers from a
/// running service whose database fails for real.
@Suite struct StorageFailureResponseTests {
    static let answers: [(TableStorageFailure, status: Int, message: String)] = [
        (
            .duplicateID, 409,
            "An item with this id already exists on the service; choose another id (or update that item)."
        ),
        (
            .queryTooComplex("Expression tree is too large"), 400,
            "The $filter is too complex for the database (too deeply nested or too many conditions); "
                + "simplify it or split the query."
        ),
        (.unavailable("database is locked"), 500, serverFailure),
        (.tooLarge("string or blob too big"), 500, serverFailure),
        (.corrupt("file is not a database"), 500, serverFailure),
        (.keptChanging(id: "a"), 500, serverFailure),
        (
            .notDurable("fdatasync: Input/output error"), 503,
            "The table service could not save the change to its disk, so it is not confirmed; keep it and "
                + "send it again later. The service's operator must check its disk and restart it."
        ),
        (.other("no such table: todoitem"), 500, serverFailure),
    ]

    static let serverFailure =
        "The table service could not read or write its database. The error has been logged; please try again."

    @Test func everyFailureHasTheStatusAndMessageClientsGot() {
        #expect(Set(Self.answers.map { StorageFailureKind($0.0) }) == Set(StorageFailureKind.allCases))
        for (failure, status, message) in Self.answers {
            let error = TableError.storage(failure)
            #expect(error.status.code == status, "\(failure)")
            #expect(error.message == message, "\(failure)")
            #expect(failure.isLogged == (status >= 500), "\(failure)")
        }
    }

    @Test(arguments: Backend.all) func existingIDIsAConflictWithItsMessage(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "a"]).status == 201)
            let again = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            #expect(again.status == 409)
            #expect(again.object?["id"] as? String == "a")
        }
    }

    @Test func filterPastSQLiteLimitsIsABadRequestWithItsMessage() async throws {
        try await withTestServer(.sqlite) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "complete": false])
            let filter = Array(repeating: "complete", count: 1100).joined(separator: " and ")
            let reply = try await server.send(
                .get, "/tables/todoitem?$filter=" + filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            )
            #expect(reply.status == 400)
            #expect(reply.object?["error"] as? String == TableStorageFailure.queryTooComplex("").message)
        }
    }

    @Test(arguments: Backend.all) func tableDroppedBehindTheServiceIsAServerErrorThatSaysLittle(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "one"]).status == 201)
            switch server.database {
            case .sqlite(let path):
                try await sideConnection(try #require(path)).write { db in
                    try db.execute(sql: "DROP TABLE todoitem")
                }
            case .postgres(let location):
                let url = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
                _ = try await TestPostgres.textRows("DROP TABLE todoitem", url: url)
            }
            let reply = try await server.send(.get, "/tables/todoitem")
            #expect(reply.status == 500)
            #expect(reply.object?["error"] as? String == Self.serverFailure)
            #expect(!reply.text.contains("no such table") && !reply.text.contains("does not exist"))
        }
    }
}
