import Foundation
import SyncProtocol
import TestSupport
import Testing

/// Two service instances on one PostgreSQL database behave as one service: an `If-Match` race
/// spread over both has exactly one winner, and both can add the same new column at once.
@Suite(.enabled(if: TestPostgres.isRequired, "needs the PostgreSQL cluster of the test command"))
struct MultiInstanceTests {
    @Test("Datasync v3 over two instances of a declared table: one If-Match winner, enum order on both")
    func datasyncOverTwoInstancesActsAsOneService() async throws {
        let schema = try DatasyncFixtures.schema()
        try await withTestServer(.postgres, configure: { $0.schema = schema }) { first in
            try await withTestServer(.postgres, sharing: first, configure: { $0.schema = schema }) { second in
                let v3 = DatasyncFixtures.v3
                for (id, rating) in [("a", "R"), ("b", "G"), ("c", "Unrated")] {
                    let created = try await first.send(
                        .post, "/tables/movies", json: ["id": id, "rating": rating], headers: v3)
                    #expect(created.status == 201)
                }
                let etag = try #require(try await second.send(.get, "/tables/movies/a", headers: v3).header("ETag"))
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<10 {
                        let instance = index.isMultiple(of: 2) ? first : second
                        group.addTask {
                            var headers = v3
                            headers[.ifMatch] = etag
                            return try await instance.send(
                                .put, "/tables/movies/a", json: ["rating": "PG", "title": "writer \(index)"],
                                headers: headers
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 1)
                #expect(statuses.filter { $0 == 412 }.count == 9)
                for instance in [first, second] {
                    let page = try await instance.send(.get, "/tables/movies?$orderby=rating", headers: v3)
                    let ids = (page.object?["items"] as? [[String: Any]])?.map { $0["id"] as? String }
                    #expect(ids == ["c", "b", "a"])
                }
            }
        }
    }

    @Test func ifMatchRaceOverTwoInstancesHasExactlyOneWinnerAndTheLosersGetItsItem() async throws {
        try await withTestServer(.postgres) { first in
            try await withTestServer(.postgres, sharing: first) { second in
                let created = try await first.send(.post, "/tables/todoitem", json: ["id": "race", "text": "start"])
                let etag = try #require(created.header("ETag"))

                let replies = try await raceTwentyPatches(of: [first, second], ifMatch: etag)

                let winners = replies.filter { $0.1.status == 200 }
                #expect(winners.count == 1)
                let losers = replies.filter { $0.1.status == 412 }
                #expect(losers.count == 19)
                let winner = try #require(winners.first)
                let winningETag = try #require(winner.1.header("ETag"))
                for instance in [first, second] {
                    let stored = try await instance.send(.get, "/tables/todoitem/race")
                    #expect(stored.object?["text"] as? String == "writer \(winner.0)")
                    #expect(stored.header("ETag") == winningETag)
                }
                // Nothing else wrote: every loser's body is the winner's item.
                for loser in losers {
                    #expect(loser.1.header("ETag") == winningETag)
                    #expect(loser.1.object?["text"] as? String == "writer \(winner.0)")
                }
            }
        }
    }

    @Test func twoInstancesAddingTheSameColumnsAtOnceBothSucceed() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { first in
            try await withTestServer(.postgres, sharing: first) { second in
                // Ten rounds; in each, both instances insert rows that bring the same new column at once.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for round in 0..<10 {
                        for (side, instance) in [first, second].enumerated() {
                            group.addTask {
                                for copy in 0..<3 {
                                    let reply = try await instance.send(
                                        .post, "/tables/todoitem",
                                        json: ["id": "r\(round)-s\(side)-\(copy)", "column\(round)": round * 10 + side])
                                    #expect(reply.status == 201, "\(reply.text)")
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // Each instance reads every row with every column, including those the other one added.
                for instance in [first, second] {
                    let page = try await instance.send(.get, "/tables/todoitem?$top=100&$orderby=id")
                    let rows = try #require(page.array)
                    #expect(rows.count == 60)
                    for row in rows {
                        let id = try #require(row["id"] as? String)
                        let round = Int(id.dropFirst().prefix { $0 != "-" })!
                        let side = id.contains("-s0-") ? 0 : 1
                        #expect(row["column\(round)"] as? Int == round * 10 + side, "\(id)")
                        #expect(row.keys.filter { $0.hasPrefix("column") }.count == 10)
                    }
                    let filtered = try await instance.send(.get, "/tables/todoitem?$filter=column9%20eq%2091")
                    #expect(filtered.array?.count == 3)
                }
            }
        }
    }
}
