import Foundation
import HTTPTypes
import Logging
import SyncProtocol
import TestSupport
import Testing

@testable import TableService

/// `GET /tables/{table}/$changes`: a long poll and a stream of Server-Sent Events that wake a
/// client when a row it may see is written past its cursor.
@Suite struct ChangeChannelTests {
    static let v2: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]

    static func cursor(_ reply: TestServer.Reply) -> String? { reply.object?["cursor"] as? String }

    @Test(arguments: Backend.all) func aLongPollIsAnsweredByTheNextCommit(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let now = try await server.send(.get, "/tables/todoitem/$changes")
            #expect(now.status == 200)
            #expect(Self.cursor(now) == "0")
            async let woken = server.send(.get, "/tables/todoitem/$changes?cursor=0&timeout=60")
            // However the poll and the insert interleave, the poll sees the row.
            let inserted = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "one"])
            #expect(inserted.status == 201)
            let answer = try await woken
            #expect(answer.status == 200)
            let cursor = try #require(Self.cursor(answer))
            #expect(ChangeCursor(text: cursor)?.id == "a")
            #expect(answer.object?["table"] as? String == "todoitem")
            // Nothing new past it: an empty answer once the (zero) timeout passes.
            #expect(try await server.send(.get, "/tables/todoitem/$changes?cursor=\(cursor)&timeout=0").status == 204)
        }
    }

    @Test(arguments: Backend.all) func aStreamOfATableNoOneWroteYetIsWokenByItsFirstRow(_ backend: Backend) async throws
    {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let stream = try await server.http.events(server.url + "/tables/orders/$changes", headers: Self.v2)
            #expect(stream.status == 200)
            let inserted = try await server.send(.post, "/tables/orders", json: ["id": "o1", "customer": "Ada"])
            #expect(inserted.status == 201)
            let event = try #require(try await stream.next())
            #expect(ChangeCursor(text: event.id ?? "")?.id == "o1")
            #expect(event.data.contains("\"table\":\"orders\""))
        }
    }

    /// Waiting and waking cost the database nothing: 50 subscribers are woken by a write without
    /// one read transaction.
    @Test func wakingSubscribersReadsNothing() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            var streams: [TestEventStream] = []
            for _ in 0..<50 {
                streams.append(try await server.http.events(server.url + "/tables/todoitem/$changes", headers: Self.v2))
            }
            let store = server.running.service.store
            let before = try #require(store.databaseReads)
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "wakes-all"])
            for stream in streams { #expect(ChangeCursor(text: try await stream.next()?.id ?? "")?.id == "wakes-all") }
            #expect(store.databaseReads == before)
        }
    }

    @Test func cursorsIncreaseWithEveryWrite() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            var cursors: [ChangeCursor] = []
            for index in 0..<5 {
                _ = try await server.send(.post, "/tables/todoitem", json: ["id": "r\(4 - index)"])
                let now = try await server.send(.get, "/tables/todoitem/$changes")
                cursors.append(try #require(Self.cursor(now).flatMap(ChangeCursor.init(text:))))
            }
            _ = try await server.send(.patch, "/tables/todoitem/r4", json: ["text": "again"])
            cursors.append(
                try #require(
                    Self.cursor(try await server.send(.get, "/tables/todoitem/$changes")).flatMap(
                        ChangeCursor.init(text:)))
            )
            #expect(cursors == cursors.sorted() && Set(cursors).count == cursors.count)
        }
    }

    @Test func anyTextOfTheDocumentedPatternIsACursor() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            // Its id's bytes are no UTF-8 text, yet it is a position before the row.
            let odd = try await server.send(.get, "/tables/todoitem/$changes?cursor=1.__8&timeout=0")
            #expect(odd.status == 200)
            #expect(Self.cursor(odd) != nil)
        }
    }

    @Test func badCursorsTimeoutsAndTablesAreRefusedWithReasons() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            let malformed = try await server.send(.get, "/tables/todoitem/$changes?cursor=yesterday")
            #expect(malformed.status == 400)
            #expect(malformed.text.contains("not a change cursor"))
            let future = try await server.send(.get, "/tables/todoitem/$changes?cursor=99999999999999.YQ")
            #expect(future.status == 400)
            #expect(future.text.contains("past this table's newest change"))
            // Not of /openapi.json's pattern: empty, a lone character, 19 digits, padding, bits past the last byte.
            for text in ["", "1.A", "1234567890123456789", "1.YQ==", "1.YR"] {
                #expect(
                    try await server.send(.get, "/tables/todoitem/$changes?cursor=\(text)").status == 400, "\(text)")
            }
            let long = try await server.send(.get, "/tables/todoitem/$changes?cursor=0&timeout=121")
            #expect(long.status == 400)
            // A table no one wrote to is an empty one (tables come with their first row), not a 404:
            // a client would take a 404 for a service without the channel.
            let unwritten = try await server.send(.get, "/tables/nothere/$changes")
            #expect(unwritten.status == 200 && Self.cursor(unwritten) == "0")
            #expect(try await server.send(.get, "/tables/no-such;table/$changes").status == 400)
        }
    }

    @Test(arguments: Backend.all) func aStreamSendsAnEventPerCommitAndResumesFromLastEventID(
        _ backend: Backend
    )
        async throws
    {
        try await withTestServer(backend, tables: ["todoitem"]) { server in
            let stream = try await server.http.events(server.url + "/tables/todoitem/$changes", headers: Self.v2)
            #expect(stream.status == 200)
            var seen: [ReceivedEvent] = []
            for id in ["a", "b", "c"] {
                _ = try await server.send(.post, "/tables/todoitem", json: ["id": id])
                // Wake-ups coalesce: read until this row's cursor arrives.
                while seen.last.flatMap({ ChangeCursor(text: $0.id ?? "")?.id }) != id {
                    seen.append(try #require(try await stream.next()))
                }
            }
            #expect(seen.allSatisfy { $0.event == "change" && $0.data.contains("\"table\":\"todoitem\"") })
            let cursors = seen.compactMap { $0.id.flatMap(ChangeCursor.init(text:)) }
            #expect(cursors == cursors.sorted())
            // A stream resumed from the first row's cursor hears at once that it is behind.
            let first = try #require(seen.first?.id)
            var resume = Self.v2
            resume[HTTPField.Name("Last-Event-ID")!] = first
            let resumed = try await server.http.events(server.url + "/tables/todoitem/$changes", headers: resume)
            #expect(try await resumed.next()?.id == seen.last?.id)
        }
    }

    /// Bob's stream hears nothing of Alice's 100 rows: his first event is his own row.
    @Test(arguments: Backend.all) func aPerUserStreamIsWokenOnlyByItsOwnRows(_ backend: Backend) async throws {
        try await withTestServer(backend, configure: { $0.signIn = SignedInUsersTests.signIn }) { server in
            let alice = SignedInUsersTests.headers(try await SignedInUsersTests.token("alice"))
            let bob = SignedInUsersTests.headers(try await SignedInUsersTests.token("bob"))
            _ = try await server.send(.post, "/tables/todoitem", headers: bob, body: Data(#"{"id":"bob-0"}"#.utf8))
            let start = try #require(
                Self.cursor(try await server.send(.get, "/tables/todoitem/$changes", headers: bob)))
            let stream = try await server.http.events(
                server.url + "/tables/todoitem/$changes?cursor=\(start)", headers: bob)
            for index in 0..<100 {
                let written = try await server.send(
                    .post, "/tables/todoitem", headers: alice, body: Data(#"{"id":"alice-\#(index)"}"#.utf8))
                #expect(written.status == 201)
            }
            _ = try await server.send(.post, "/tables/todoitem", headers: bob, body: Data(#"{"id":"bob-1"}"#.utf8))
            let event = try #require(try await stream.next())
            #expect(ChangeCursor(text: event.id ?? "")?.id == "bob-1")
            // Without a token the channel answers as the table does.
            #expect(try await server.send(.get, "/tables/todoitem/$changes").status == 401)
        }
    }

    /// A wake-up at a subscriber's own position (its instance started listening to the other
    /// instances' writes, and may have missed some) reads the table: a change the feed never heard
    /// of is sent, and nothing when there is none (before, each such wake-up sent an event again).
    @Test func aWakeAtTheSubscribersOwnPositionSendsOnlyANewerChange() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "a"])
            let stream = try await server.http.events(server.url + "/tables/todoitem/$changes", headers: Self.v2)
            let opened = try #require(try await stream.next())
            let first = try #require(ChangeCursor(text: opened.id ?? ""))
            #expect(first.id == "a")
            let feed = server.running.service.store.changes
            feed.wakeAll()
            // A write the feed never heard of, as when a notification was missed (1 ms later: the
            // service stamps its next write past it, as it stamps every write past the last).
            guard case .sqlite(let path?) = server.database else { return }
            try await sideConnection(path).write { db in
                try db.execute(sql: "UPDATE todoitem SET updatedAt = updatedAt + 1 WHERE id = 'a'")
            }
            feed.wakeAll()
            let missed = try #require(try await stream.next())
            #expect(ChangeCursor(text: missed.id ?? "") == ChangeCursor(updatedAt: first.updatedAt + 1, id: "a"))
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "b"])
            let next = try #require(try await stream.next())
            #expect(ChangeCursor(text: next.id ?? "")?.id == "b")
            // A long poll woken so with nothing newer goes on waiting, for the next commit (before: it
            // answered its own cursor again).
            async let poll = server.send(.get, "/tables/todoitem/$changes?cursor=\(next.id ?? "")&timeout=60")
            try await eventually("the long poll subscribed beside the stream") { feed.subscriberCount == 2 }
            feed.wakeAll()
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "c"])
            #expect(Self.cursor(try await poll).flatMap(ChangeCursor.init(text:))?.id == "c")
        }
    }

    /// A subscriber that came before its instance listened to PostgreSQL (just started, or its
    /// listening connection lost) may have missed a write: it is woken once listening starts, and
    /// pulls from its own position. Before, only a reconnection woke them, and a stream opened on a
    /// freshly started instance could wait for ever for a write made on another.
    @Test(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
    func subscribersAreWokenWhenTheirInstanceStartsListening() async throws {
        let location = try PostgresLocation(url: try await TestPostgres.freshDatabaseURL(), poolSize: 1)
        let feed = ChangeFeed(limit: 10)
        let start = ChangeCursor(updatedAt: 0, id: "")
        let wakes = try #require(feed.subscribe(table: "todoitem", owner: nil, after: start))
        let bus = PostgresChangeBus(feed: feed)
        let listening = Task { await bus.listen(location, logger: Logger(label: "test")) }
        var woken = wakes.makeAsyncIterator()
        #expect(await woken.next() == start)
        listening.cancel()
    }

    /// PostgreSQL is the bus: a write through one instance wakes a subscriber on another.
    @Test(.enabled(if: Backend.all.contains(.postgres)))
    func aWriteThroughOneInstanceWakesASubscriberOnAnother() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { writer in
            try await withTestServer(.postgres, sharing: writer) { reader in
                let stream = try await reader.http.events(
                    reader.url + "/tables/todoitem/$changes?cursor=0", headers: Self.v2)
                #expect(stream.status == 200)
                let inserted = try await writer.send(.post, "/tables/todoitem", json: ["id": "elsewhere"])
                #expect(inserted.status == 201)
                let event = try #require(try await stream.next())
                #expect(ChangeCursor(text: event.id ?? "")?.id == "elsewhere")
            }
        }
    }

    /// A row written by SQL outside todosync (or by an instance killed between its commit and the
    /// notification that would have told the others) still wakes the subscribers: each instance
    /// reads the rows past the newest commit it heard of once a second.
    @Test(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
    func aRowWrittenOutsideTheServiceWakesSubscribersWithinASecondOrSo() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"]) { server in
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "first"])
            let stream = try await server.http.events(
                server.url + "/tables/todoitem/$changes?cursor=0", headers: Self.v2)
            #expect(ChangeCursor(text: try #require(try await stream.next()).id ?? "")?.id == "first")
            guard case .postgres(let location) = server.database else { return }
            let url = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
            // A row the instance never heard of: after the one it wrote, where its sweep reads from.
            _ = try await TestPostgres.textRows(
                """
                INSERT INTO todoitem ("id", "createdAt", "updatedAt", "version", "deleted")
                SELECT 'outside', s, s, 'v', false FROM (SELECT "__todosync_stamp"() AS s) AS stamp RETURNING "id"
                """, url: url)
            let event = try #require(try await stream.next())
            #expect(ChangeCursor(text: event.id ?? "")?.id == "outside")
        }
    }

    @Test func subscribersBeyondTheLimitAreToldToComeBackLater() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"], configure: { $0.maxSubscribers = 1 }) { server in
            let open = try await server.http.events(server.url + "/tables/todoitem/$changes", headers: Self.v2)
            #expect(open.status == 200)
            let refused = try await server.send(.get, "/tables/todoitem/$changes?cursor=0&timeout=5")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "5")
        }
    }

    @Test func stoppingTheServiceAnswersWaitingPollsAndEndsStreamsWithARetryHint() async throws {
        let server = try await TestServer(.sqlite, tables: ["todoitem"])
        let stream = try await server.http.events(server.url + "/tables/todoitem/$changes", headers: Self.v2)
        async let poll = server.send(.get, "/tables/todoitem/$changes?cursor=0&timeout=120")
        try await eventually("the long poll subscribed beside the stream") {
            server.running.service.subscriberCount == 2
        }
        await server.stop()
        #expect(try await poll.status == 204)
        #expect(try await stream.rest().isEmpty)
        #expect(stream.retryMilliseconds == 2000)
    }

    /// 10,000 subscriptions opened and dropped, 32 at a time: none is left behind, and the service
    /// still answers.
    @Test func subscriptionsThatComeAndGoLeaveNothingBehind() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"]) { server in
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<(10_000 / 32) {
                            statuses.append(
                                try await server.send(.get, "/tables/todoitem/$changes?cursor=0&timeout=0").status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == 10_000 / 32 * 32 && statuses.allSatisfy { $0 == 204 })
            #expect(server.running.service.subscriberCount == 0)
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "still"]).status == 201)
        }
    }
}
