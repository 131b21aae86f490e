import Foundation
import SyncProtocol
import TestSupport
import Testing

/// The `If-Match` check and the write are one transaction, and `updatedAt` never repeats.
@Suite struct ConcurrencyTests {
    @Test(arguments: Backend.all) func twentyConcurrentPatchesWithOneIfMatchHaveExactlyOneWinner(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["id": "race", "text": "start"])
            let etag = try #require(created.header("ETag"))

            let replies = try await raceTwentyPatches(of: [server], ifMatch: etag)

            let winners = replies.filter { $0.1.status == 200 }
            #expect(winners.count == 1)
            #expect(replies.filter { $0.1.status == 412 }.count == 19)
            let winner = try #require(winners.first)
            let stored = try await server.send(.get, "/tables/todoitem/race")
            #expect(stored.object?["text"] as? String == "writer \(winner.0)")
            #expect(stored.header("ETag") == winner.1.header("ETag"))
            for loser in replies where loser.1.status == 412 {
                // Every loser saw a current item; the last of them saw the winner's.
                #expect(loser.1.object?["id"] as? String == "race")
                #expect(loser.1.header("ETag") != nil)
            }
        }
    }

    @Test(arguments: Backend.all) func aReadWhileAnInsertAddsAColumnAnswersTheRowWithItsValue(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            // Each round: a table, then an insert that adds a column, raced by reads of the item and of
            // the table until the row shows; it must never come without the value its insert gave it.
            for round in 0..<200 {
                let table = "/tables/grows\(round)"
                let seeded = try await server.send(.post, table, json: ["id": "seed"])
                #expect(seeded.status == 201)
                let insertStatus = SharedInt()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let inserted = try await server.send(.post, table, json: ["id": "new", "added": "value"])
                        #expect(inserted.status == 201, "round \(round): \(inserted.text)")
                        insertStatus.set(inserted.status)
                    }
                    group.addTask {
                        while true {
                            // Read after the insert answered: the row shows now or never (a failed insert
                            // ends the round instead of leaving this loop reading for ever).
                            let answered = insertStatus.value
                            let item = try await server.send(.get, table + "/new")
                            if item.status == 200 {
                                #expect(item.object?["added"] as? String == "value", "round \(round): \(item.text)")
                            }
                            let page = try await server.send(.get, table)
                            let rows = try #require(page.array)
                            if let row = rows.first(where: { $0["id"] as? String == "new" }) {
                                #expect(row["added"] as? String == "value", "round \(round): \(row)")
                                return
                            }
                            if answered != 0 {
                                #expect(
                                    answered != 201, "round \(round): the row its insert answered 201 for is missing")
                                return
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    /// SQLite stamps in commit order. (PostgreSQL does not: its writers do not wait for one
    /// another, and two may take the same stamp; `PullNeverMissesTests` checks what that must keep.)
    @Test func sqliteGivesWritesOfOneBurstDistinctUpdatedAtRisingInCommitOrder() async throws {
        try await withTestServer(.sqlite) { server in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        for index in 0..<50 {
                            let reply = try await server.send(
                                .post, "/tables/burst", json: ["id": "w\(worker)-\(index)", "n": index])
                            #expect(reply.status == 201)
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Without $orderby rows come in insertion (commit) order: updatedAt must rise strictly along it.
            let page = try await server.send(.get, "/tables/burst?$top=1000")
            let stamps = try #require(page.array).compactMap { $0["updatedAt"] as? String }
            #expect(stamps.count == 300)
            #expect(Set(stamps).count == 300)
            #expect(stamps == stamps.sorted())
        }
    }

    @Test(arguments: Backend.all) func updatedAtMovesPastTheLastValueWhenTheClockRepeats(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend, controlledClock: true) { server in
            server.clock.now = 1_800_000_000_000
            var stamps: [String] = []
            for index in 0..<5 {
                let reply = try await server.send(.post, "/tables/todoitem", json: ["id": "same-\(index)"])
                stamps.append(try #require(reply.object?["updatedAt"] as? String))
            }
            let deleted = try await server.send(.delete, "/tables/todoitem/same-0")
            stamps.append(try #require(deleted.object?["updatedAt"] as? String))
            #expect(
                stamps == [
                    "2027-01-15T08:00:00.000Z", "2027-01-15T08:00:00.001Z", "2027-01-15T08:00:00.002Z",
                    "2027-01-15T08:00:00.003Z", "2027-01-15T08:00:00.004Z", "2027-01-15T08:00:00.005Z",
                ])
        }
    }
}
