import FaultProxy
import Foundation
import GRDB
import HTTPServer
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct PushTests {
    @Test func aWindowOfOneSendsEveryKindInQueueOrderAcrossTables() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let tags = TableDescription(name: "tag", columns: [.init("label", .text)])
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint, tables: [tags], pushWindow: 1)
        try await service.rest.insert(["id": "old", "text": "server row"])
        try await service.rest.insert(["id": "gone", "text": "to delete"])
        _ = try await context.table("todoitem").pull()

        try await context.table("todoitem").insert(["id": "a", "text": "first"])
        try await context.table("tag").insert(["id": "t", "label": "home"])
        try await context.table("todoitem").update(["id": "old", "text": "changed"])
        try await context.table("todoitem").delete(id: "gone")
        try await context.table("tag").update(["id": "t", "label": "work"])

        let result = try await context.push()
        #expect(result.pushed.count == 4)
        #expect(result.conflicts.isEmpty && result.failed.isEmpty)
        #expect(
            proxy.requests.suffix(4) == [
                "POST /tables/todoitem", "POST /tables/tag", "PATCH /tables/todoitem/old",
                "DELETE /tables/todoitem/gone",
            ])
        #expect(try context.operations.all().isEmpty)
        #expect(try await service.rest.get("todoitem", "old")?.text == "changed")
        #expect(try await service.rest.get("tag", "t")?["label"] == "work")
        #expect(try await service.rest.get("todoitem", "gone") == nil)
    }

    /// Counts the store's commits.
    final class CommitCounter: TransactionObserver, Sendable {
        private let count = Mutex(0)
        var commits: Int { count.withLock { $0 } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    @Test func aPushCommitsOncePerBatchAndMarksEachOperationInFlightBeforeSendingIt() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let seen = Mutex<[String]>([])
        let path = folder.file("store.sqlite")
        let proxy = try await service.proxy()
        proxy.intercept { _, _ in
            // What the store says while the request is on its way.
            let states = try sideConnection(path).read { db in
                try String.fetchAll(db, sql: "SELECT itemId || ' ' || state FROM __operations ORDER BY id")
            }
            seen.withLock { $0.append(states.joined(separator: ", ")) }
            return nil
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        for index in 0..<3 { try await context.table("todoitem").insert(["id": .string("t\(index)"), "text": "x"]) }
        // The catch-up the opening started commits too: only the push's commits are counted.
        await context.listIndexesCaughtUp()
        let counter = CommitCounter()
        context.store.pool.add(transactionObserver: counter, extent: .observerLifetime)
        let result = try await context.push()
        #expect(result.pushed.count == 3)
        // The three attempts begin together, before the first request; their answers are stored together.
        #expect(seen.withLock { $0 } == Array(repeating: "t0 inFlight, t1 inFlight, t2 inFlight", count: 3))
        #expect(try context.operations.all().isEmpty)
        // The marks of the batch, its answers, the summary, the flight recorder's three exchanges.
        #expect(counter.commits == 1 + 1 + 1 + 1)
        #expect(try context.exchanges().exchanges.count == 3)
    }

    @Test func pushWritesTheServersItemBack() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        _ = try await context.push()
        let row = try #require(try context.table("todoitem").item(id: "a"))
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(row.version != nil)
        #expect(row.version == server.version)
        #expect(row["updatedAt"] == server["updatedAt"])
        try await context.table("todoitem").update(["id": "a", "complete": true])
        let result = try await context.push()
        #expect(result.pushed.count == 1)
        #expect(try await service.rest.get("todoitem", "a")?["complete"] == .bool(true))
    }

    @Test func deleteOfAnItemAlreadyGoneOnTheServerCountsAsDone() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "one"])
        _ = try await context.table("todoitem").pull()
        try await service.rest.delete("a")
        try await context.table("todoitem").delete(id: "a")
        let result = try await context.push()
        #expect(result.pushed.count + result.conflicts.count == 1)
        // A 412 whose server item is gone, or a 404: either way nothing is left to do.
        #expect(try context.operations.all().isEmpty)
    }

    @Test func aPushedRowTakesTheServicesVersionAndStaysFoundBySearch() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "water the plants", "complete": true])
        _ = try await context.push()
        let stored = try #require(try await service.rest.get("todoitem", "a"))
        let local = try #require(try context.table("todoitem").item(id: "a"))
        #expect(local.version == stored.version && local.version != nil)
        #expect(local["updatedAt"] == stored["updatedAt"] && local["createdAt"] == stored["createdAt"])
        #expect(local.text == "water the plants" && local["complete"] == .bool(true))
        let found = try context.listPage("todoitem", ListRequest(search: "plants"))
        #expect(found.items.compactMap { $0["id"]?.stringValue } == ["a"])
        let done = try context.listPage("todoitem", ListRequest(flag: .init("complete", true)))
        #expect(done.total == 1)
    }

    @Test func serverStoppedMidPushKeepsTheQueueAndRetrySucceedsAfterRestart() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        // The service goes away mid-push and comes back behind a proxy that keeps its port (a
        // stopped service's port may be taken by another test's service meanwhile).
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        for index in 0..<300 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        let stopper = Task {
            for await progress in context.progressUpdates() where progress.activity == .pushing && progress.done >= 5 {
                proxy.setPlan(.always(.refuse))
                return
            }
        }
        let error = await #expect(throws: SyncError.self) { try await context.push() }
        stopper.cancel()
        guard case .stopped(let reason)? = error else {
            Issue.record("expected a stop, got \(String(describing: error))")
            return
        }
        #expect(reason != .offline)
        let left = try context.operations.all().count
        #expect(left > 0 && left < 300)
        #expect(try context.status().lastSync?.stopReason != nil)

        proxy.setPlan(.passThrough)
        let result = try await context.push()
        #expect(result.conflicts.isEmpty && result.failed.isEmpty)
        #expect(try context.operations.all().isEmpty)
        #expect(try await service.rest.all().count == 300)
        await proxy.stop()
        await service.stop()
    }

    @Test func lostAnswerToACommittedInsertIsRecognisedOnRetry() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let withheld = TestEvent()
        proxy.intercept(Self.losingTheFirstAnswer(to: "POST", withheld: withheld))
        let clock = ManualWallClock()
        let context = try Self.losingContext(at: folder.file("store.sqlite"), remote: proxy.endpoint, clock: clock)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.stopped(.tooSlow(seconds: Self.lostAnswerDeadline))) {
            try await Self.push(context, passingTheDeadlineOnce: withheld, on: clock)
        }
        #expect(try queueShape(context) == ["insert a attempted"])

        let retrying = try await context.reopened(at: folder.file("store.sqlite"), remote: proxy.endpoint)
        let result = try await retrying.push()
        #expect(result.pushed.count == 1)
        #expect(result.conflicts.isEmpty)
        #expect(try retrying.operations.all().isEmpty)
        #expect(try await service.rest.all().count == 1)
        #expect(try retrying.table("todoitem").item(id: "a")?.version != nil)
    }

    @Test func lostAnswerThenLocalEditBecomesAnUpdateOfTheServersCopy() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let withheld = TestEvent()
        proxy.intercept(Self.losingTheFirstAnswer(to: "POST", withheld: withheld))
        let clock = ManualWallClock()
        let context = try Self.losingContext(at: folder.file("store.sqlite"), remote: proxy.endpoint, clock: clock)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.stopped(.tooSlow(seconds: Self.lostAnswerDeadline))) {
            try await Self.push(context, passingTheDeadlineOnce: withheld, on: clock)
        }
        try await context.table("todoitem").update(["id": "a", "text": "two"])

        let retrying = try await context.reopened(at: folder.file("store.sqlite"), remote: proxy.endpoint)
        let result = try await retrying.push()
        #expect(result.pushed == [1])
        #expect(try retrying.operations.all().isEmpty)
        #expect(try await service.rest.get("todoitem", "a")?.text == "two")
    }

    /// How long a client waits for an answer the proxy withholds, on a ``ManualWallClock``.
    static let lostAnswerDeadline: Double = 5

    /// A store at `path` syncing with `remote`, its deadlines on `clock`.
    static func losingContext(
        at path: String, remote: URL, clock: ManualWallClock, policy: ConflictPolicy = .merge
    ) throws -> SyncContext {
        var configuration = SyncConfiguration(
            remoteURL: remote, requestTimeout: lostAnswerDeadline, conflictPolicy: policy)
        configuration.clock = clock
        return try SyncContext(path: path, configuration: configuration)
    }

    /// Pushes, and moves `clock` past the deadline once an answer was `withheld`: the lost answer
    /// gives up then, whatever the requests before it took on a loaded machine.
    static func push(
        _ context: SyncContext, passingTheDeadlineOnce withheld: TestEvent, on clock: ManualWallClock
    ) async throws {
        let pushing = Task {
            defer { withheld.signal() }
            _ = try await context.push()
        }
        await withheld.wait()
        clock.advance(by: lostAnswerDeadline)
        try await pushing.value
    }

    /// Forwards the first request with `method` (the service applies it), then withholds the
    /// answer, signalling `withheld`: the client waits for it until its deadline gives up, as after
    /// a lost answer.
    static func losingTheFirstAnswer(to method: String, withheld: TestEvent) -> Interceptor {
        let armed = Trigger(armed: true)
        return { request, upstream in
            guard request.method == method, armed.take() else { return nil }
            _ = try await upstream.forward(request)
            withheld.signal()
            return .withhold
        }
    }

    @Test func editDuringAnInFlightPushIsKept() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let contextBox = Mutex<SyncContext?>(nil)
        let proxy = try await service.proxy()
        proxy.intercept { request, _ in
            if request.method == "PATCH", let context = contextBox.withLock({ $0 }) {
                // The user edits the item while its update is on the wire.
                _ = try await context.table("todoitem").update(["id": "a", "text": "edited during push"])
            }
            return nil
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        contextBox.withLock { $0 = context }
        try await service.rest.insert(["id": "a", "text": "one"])
        _ = try await context.table("todoitem").pull()
        try await context.table("todoitem").update(["id": "a", "text": "two"])

        let first = try await context.push()
        #expect(first.pushed.count == 1)
        let row = try #require(try context.table("todoitem").item(id: "a"))
        #expect(row.text == "edited during push")
        #expect(row.version == (try await service.rest.get("todoitem", "a"))?.version)
        #expect(try queueShape(context).count == 1)

        contextBox.withLock { $0 = nil }
        let second = try await context.push()
        #expect(second.pushed.count == 1 && second.conflicts.isEmpty)
        #expect(try await service.rest.get("todoitem", "a")?.text == "edited during push")
    }

    @Test func anEditQueuedBehindAMergeWhoseAnswerWasLostSendsOnlyItsOwnChanges() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let contextBox = Mutex<SyncContext?>(nil)
        let withheld = TestEvent()
        let patches = Mutex(0)
        let proxy = try await service.proxy()
        proxy.intercept { request, upstream in
            guard request.method == "PATCH", let context = contextBox.withLock({ $0 }) else { return nil }
            switch patches.withLock({
                $0 += 1; return $0
            }) {
            case 1:
                // The user edits again while the update is on the wire (queued behind it): its 412
                // is merged, and the merged row carries that edit too.
                _ = try await context.table("todoitem").update(["id": "a", "text": "three"])
                return nil
            case 2:
                // The merged update lands; its answer is lost.
                _ = try await upstream.forward(request)
                withheld.signal()
                return .withhold
            default:
                return nil
            }
        }
        let path = folder.file("store.sqlite")
        let puller = try SyncContext(path: path, configuration: .init(remoteURL: proxy.endpoint))
        try await service.rest.insert(["id": "a", "text": "one", "complete": false])
        _ = try await puller.table("todoitem").pull()
        try await puller.close()
        let clock = ManualWallClock()
        let context = try Self.losingContext(at: path, remote: proxy.endpoint, clock: clock)
        try await context.table("todoitem").update(["id": "a", "text": "two"])
        var version = try #require(try await service.rest.get("todoitem", "a")?.version)
        _ = try await service.rest.send(.patch, "/tables/todoitem/a", body: ["complete": true], ifMatch: version)
        contextBox.withLock { $0 = context }
        await #expect(throws: SyncError.stopped(.tooSlow(seconds: Self.lostAnswerDeadline))) {
            try await Self.push(context, passingTheDeadlineOnce: withheld, on: clock)
        }
        #expect(try await service.rest.get("todoitem", "a")?.text == "three", "the merged update landed")
        // Then another device turns `complete` back: the local row's `complete` is stale now.
        version = try #require(try await service.rest.get("todoitem", "a")?.version)
        _ = try await service.rest.send(.patch, "/tables/todoitem/a", body: ["complete": false], ifMatch: version)

        // The retry finds its update applied; the edit queued behind it has nothing of its own left.
        let retrying = try await context.reopened(at: path, remote: proxy.endpoint)
        #expect(try await retrying.push().conflicts.isEmpty)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "three")
        #expect(server["complete"] == false, "the other device's change is kept, not overwritten by the stale copy")
        #expect(try retrying.table("todoitem").item(id: "a")?["complete"] == false)
    }

    @Test func aConflictMetTwiceInOnePushIsSettledByTheNextSyncUnderItsPolicy() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let patches = Mutex(0)
        let proxy = try await service.proxy()
        proxy.intercept { request, _ in
            guard request.method == "PATCH" else { return nil }
            // Before each of the first two updates lands, another device changes `complete` again.
            guard
                patches.withLock({
                    $0 += 1; return $0
                }) <= 2
            else { return nil }
            let current = try await service.rest.get("todoitem", "a")
            _ = try await service.rest.send(
                .patch, "/tables/todoitem/a", body: ["complete": .bool(current?["complete"] != true)],
                ifMatch: current?.version)
            return nil
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint, policy: .merge)
        try await service.rest.insert(["id": "a", "text": "one", "complete": false])
        _ = try await context.table("todoitem").pull()
        try await context.table("todoitem").update(["id": "a", "text": "two"])

        let first = try await context.push()
        #expect(first.conflicts == [1], "the merge met a newer copy again: it waits")
        // Nothing else is queued: a sync (what auto-sync runs) pushes for the waiting conflict.
        guard case .synced(let second) = try await context.run(.sync(queryId: "q", pageSize: 50)) else {
            Issue.record("expected a sync")
            return
        }
        #expect(
            second.pushed?.conflicts.isEmpty == true && second.pushed?.pushed.count == 1, "merged with the newest copy")
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "two" && server["complete"] == false, "both changes kept")
        #expect(try context.journal.entries().entries.first?.decision == .merge)
    }

    @Test func twoQueuedOperationsOfOneItemAreBothSentInOrderByTheNextPush() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let contextBox = Mutex<SyncContext?>(nil)
        let withheld = TestEvent()
        let proxy = try await service.proxy()
        proxy.intercept { request, upstream in
            guard request.method == "PATCH", let context = contextBox.withLock({ $0.take() }) else { return nil }
            // The user edits the item while its update is on the wire, then the answer is lost: the
            // client waits for it until its deadline gives up.
            _ = try await context.table("todoitem").update(["id": "a", "text": "edited during push"])
            _ = try await upstream.forward(request)
            withheld.signal()
            return .withhold
        }
        let path = folder.file("store.sqlite")
        let puller = try SyncContext(path: path, configuration: .init(remoteURL: proxy.endpoint))
        try await service.rest.insert(["id": "a", "text": "one"])
        _ = try await puller.table("todoitem").pull()
        try await puller.close()
        // The push whose answer is lost.
        let clock = ManualWallClock()
        let context = try Self.losingContext(at: path, remote: proxy.endpoint, clock: clock)
        try await context.table("todoitem").update(["id": "a", "text": "two"])
        contextBox.withLock { $0 = context }
        await #expect(throws: SyncError.stopped(.tooSlow(seconds: Self.lostAnswerDeadline))) {
            try await Self.push(context, passingTheDeadlineOnce: withheld, on: clock)
        }
        #expect(try queueShape(context) == ["update a attempted", "update a pending"])

        // The second operation begins only once the first one's answer is stored.
        let retrying = try await context.reopened(at: path, remote: proxy.endpoint)
        let result = try await retrying.push()
        #expect(result.pushed.count == 2 && result.skipped.isEmpty && result.conflicts.isEmpty)
        #expect(try retrying.operations.all().isEmpty)
        #expect(try await service.rest.get("todoitem", "a")?.text == "edited during push")
    }

    @Test func aBatchOfAnswersSettlesEachOperationAsItsOwnAnswerWould() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todos = context.table("todoitem")
        for (id, text) in [("same", "as sent"), ("edited", "first"), ("changed", "mine"), ("purged", "gone")] {
            try await todos.insert(["id": .string(id), "text": .string(text)])
        }
        try await context.store.pool.write { db in try db.execute(sql: "DELETE FROM todoitem WHERE id = 'purged'") }
        let queue = context.queue
        let ids = try context.operations.all().map(\.id)
        let begun = try await context.store.asyncWrite { db in try queue.beginAttempts(db, ids: ids) }
        #expect(begun.map { $0?.itemId } == ["same", "edited", "changed", nil])
        try await todos.update(["id": "edited", "text": "second"])
        #expect(
            try queueShape(context) == [
                "insert same inFlight", "insert edited inFlight", "insert changed inFlight", "update edited pending",
            ])

        func answer(_ id: String, _ text: String, _ version: String) -> Item {
            [
                "id": .string(id), "text": .string(text), "complete": .bool(false), "version": .string(version),
                "createdAt": "2026-11-25T08:00:00.000Z", "updatedAt": "2026-11-25T08:00:00.000Z", "deleted": false,
            ]
        }
        let attempts = begun.compactMap { $0 }
        let answers = [
            (attempts[0].operationId, answer("same", "as sent", "v1")),
            (attempts[1].operationId, answer("edited", "first", "v2")),
            (attempts[2].operationId, answer("changed", "the service's", "v3")),
        ]
        try await context.store.asyncWrite { db in try queue.complete(db, answers) }

        #expect(try todos.item(id: "same")?["version"] == "v1")
        #expect(try todos.item(id: "same")?["text"] == "as sent")
        // The newer local value stays and waits to go out as a change of the service's version.
        #expect(try todos.item(id: "edited")?["text"] == "second")
        #expect(try todos.item(id: "edited")?["version"] == "v2")
        #expect(try context.operations.all().first?.base?["version"] == "v2")
        // The service changed a value as it stored the item: the row takes it.
        #expect(try todos.item(id: "changed")?["text"] == "the service's")
        #expect(try todos.item(id: "changed")?["version"] == "v3")
        #expect(try queueShape(context) == ["update edited pending"])
        #expect(
            try context.listPage("todoitem", ListRequest(search: "service's")).items.map { $0["id"] } == ["changed"])
    }

    @Test func anAttemptBegunButNotSentIsPutBackExactlyAsItWas() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        let id = try #require(try context.operations.all().first?.id)
        let queue = context.queue
        func row() throws -> [String] {
            try context.store.pool.read { db in
                let row = try #require(
                    try Row.fetchOne(
                        db, sql: "SELECT state, attempts, lastAttemptAt, item, earlierBodies FROM __operations"))
                return (0..<5).map { "\(row[$0] as DatabaseValue)" }
            }
        }
        func begin() async throws -> PushAttempt? {
            try await context.store.asyncWrite { db in try queue.beginAttempts(db, ids: [id])[0] }
        }
        // An earlier push sent it twice without an answer: attempted, with the bodies it sent.
        _ = try await begin()
        try await queue.markAttempted([id], message: "no answer", status: nil)
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE todoitem SET text = 'two'") }
        _ = try await begin()
        try await queue.markAttempted([id], message: "no answer", status: nil)
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE todoitem SET text = 'three'") }
        let before = try row()

        let unsent = try #require(try await begin())
        #expect(try row() != before)
        try await queue.release([unsent])
        #expect(try row() == before)
        #expect(try queueShape(context) == ["insert a attempted"])
    }

    @Test func secondPushCallerSharesTheRunningPush() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        for index in 0..<20 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        async let first = context.push()
        async let second = context.push()
        let (a, b) = try await (first, second)
        #expect(a.pushed.count + b.pushed.count >= 20)
        #expect(proxy.requests.filter { $0.hasPrefix("POST") }.count == 20)
        #expect(try await service.rest.all().count == 20)
    }

    @Test func progressCountsOperationsWhilePushing() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        for index in 0..<10 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        // Watching before the push starts: no update of it is missed.
        let updates = context.progressUpdates()
        let seen = Task {
            var seen: [String] = []
            for await progress in updates {
                seen.append(progress.summary)
                if progress.activity == .pushing, progress.done == progress.total { break }
            }
            return seen
        }
        _ = try await context.push()
        let summaries = await seen.value
        #expect(summaries.contains("pushing 10/10"))
        #expect(context.progress == .idle)
        let status = try context.status()
        #expect(status.pending == 0)
        #expect(status.lastSync?.message == "Pushed 10 changes")
    }

    @Test func refusedChangeIsFailedWithTheServersMessageAndPushGoesOn() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        // The service stores no arrays: a JSON column holding one is answered 400.
        let tags = TableDescription(name: "tag", columns: [.init("label", .text), .init("meta", .json)])
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, tables: [tags])
        try await context.table("tag").insert(["id": "a", "label": "bad", "meta": ["x", "y"]])
        try await context.table("tag").insert(["id": "b", "label": "good"])
        let result = try await context.push()
        #expect(result.failed == [1])
        #expect(result.pushed == [2])
        let operation = try #require(try context.operations.operation(1))
        #expect(operation.state == .failed)
        #expect(operation.lastStatus == 400)
        #expect(operation.message?.contains("'meta'") == true)
        #expect(try context.operations.error(of: 1)?.clientItem?["meta"] == ["x", "y"])
        #expect(try context.status().failed == 1)
        // A failed operation waits: editing the item makes it pending again.
        try await context.table("tag").update(["id": "a", "meta": nil])
        #expect(try context.operations.operation(1)?.state == .pending)
        #expect(try await context.push().pushed == [1])
    }

    @Test func unauthorisedPushStopsWithAReasonUntilTheKeyIsSet() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, applicationKey: "secret")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        let error = await #expect(throws: SyncError.self) { try await context.push() }
        guard case .stopped(.notAuthorized(let status, _))? = error else {
            Issue.record("expected notAuthorized, got \(String(describing: error))")
            return
        }
        #expect(status == 401)
        #expect(try queueShape(context) == ["insert a attempted"])
        try await context.setRemote(url: service.endpoint, applicationKey: "secret")
        #expect(try await context.push().pushed == [1])
    }
}

@Suite(.timeLimit(.minutes(10)))
struct WindowedPushTests {
    @Test func concurrentPushSendsEverythingAndReportsInQueueOrder() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        try await service.rest.insert(["id": "taken", "text": "theirs"])
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: service.endpoint, pushWindow: 4))
        for index in 0..<30 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        try await context.table("todoitem").insert(["id": "taken", "text": "mine"])
        for index in 30..<40 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "y"]) }
        let result = try await context.push()
        #expect(result.pushed == Array(1...30) + Array(32...41))
        #expect(result.conflicts == [31])
        #expect(try await service.rest.all().count == 41)
        #expect(try queueShape(context) == ["insert taken conflict"])
    }

    @Test func concurrentPushStoppedByTheServerKeepsTheQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let count = Mutex(0)
        let maintenance = Mutex(true)
        let proxy = try await service.proxy()
        proxy.intercept { _, _ in
            if maintenance.withLock({ $0 }),
                count.withLock({ value -> Int in
                    value += 1; return value
                }) > 10
            {
                return .answer(.json(503, #"{"error":"Down for maintenance."}"#))
            }
            return nil
        }
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: proxy.endpoint, pushWindow: 4))
        for index in 0..<40 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        await #expect(throws: SyncError.self) { try await context.push() }
        let onServer = try await service.rest.all().count
        #expect(onServer >= 10)
        // A request on the wire when the 503 stopped the push may have been applied, its answer lost
        // to the cancel: still queued (attempted), recognised by the next push.
        let left = try context.operations.all().count
        #expect(left >= 40 - onServer && left <= 40 - onServer + 4)
        maintenance.withLock { $0 = false }
        _ = try await context.push()
        #expect(try await service.rest.all().count == 40)
        #expect(try context.operations.all().isEmpty)
    }
}
