import AsyncHTTPClient
import Foundation
import HTTPTypes
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Against a service that misbehaves on purpose, in either protocol (v2 and Datasync v3), every push
/// and pull ends within its deadlines
/// with a typed, readable error; the queue stays intact and no other row is touched. The error names
/// the deadline that ended the exchange, and the deadlines under test run on a ``ManualWallClock``:
/// no test waits for one to pass; the time limit only turns a hang into a failure.
@Suite(.timeLimit(.minutes(10))) struct MisbehavingServiceTests {
    /// A context with the given deadlines on `clock`; by default ones no loaded machine reaches, for
    /// the tests whose deadline is not under test.
    private func context(
        _ folder: TemporaryFolder, _ service: MisbehavingService, idle: Double = 60, total: Double = 120,
        speaking spoken: TableProtocol = .v2, clock: any WallClock = SystemWallClock()
    ) throws -> SyncContext {
        var configuration = SyncConfiguration(
            remoteURL: service.url, idleTimeout: idle, requestTimeout: total, tableProtocol: spoken == .v3 ? .v3 : .v2)
        configuration.clock = clock
        return try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
    }

    private func row(_ id: String, _ updatedAt: String, complete: Bool = false) -> String {
        #"{"id":"\#(id)","text":"t","complete":\#(complete),"version":"1","createdAt":"\#(updatedAt)","updatedAt":"\#(updatedAt)","deleted":false}"#
    }

    /// A page as `spoken` writes it: a bare array (v2) or the `{items}` envelope (v3).
    private func page(_ rows: [String], _ spoken: TableProtocol = .v2) -> MisbehavingService.Behaviour {
        let array = "[" + rows.joined(separator: ",") + "]"
        return .json(200, spoken == .v3 ? #"{"items":"# + array + "}" : array)
    }

    /// The error of `body`, which must fail.
    private func failure(_ body: () async throws -> Void) async -> SyncError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? SyncError
        }
    }

    // MARK: Dropped connections

    /// An answer whose connection closes in the middle of its body is a dropped connection: sent
    /// again (each pull page is a GET), and when it keeps dropping the pull stops saying so, with
    /// nothing written.
    @Test func anAnswerCutInTheMiddleOfItsBodyIsSentAgainThenStopsAsADroppedConnection() async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in .cut(length: 5000, sent: 1000) }) { service in
            var configuration = SyncConfiguration(remoteURL: service.url, tableProtocol: .v2)
            configuration.connectionRetry = ConnectionRetry(retries: 2, firstPause: .milliseconds(1))
            let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
            let error = await failure { _ = try await context.table("todoitem").pull(queryId: "all") }
            guard case .stopped(.connectionLost(let detail))? = error else {
                Issue.record("stopped by \(String(describing: error))")
                return
            }
            #expect(detail.contains("closed before the answer was complete"))
            #expect(service.requests.count == 3, "sent once, then again twice")
            #expect(try context.table("todoitem").count() == 0)
        }
    }

    // MARK: Deadlines

    @Test(arguments: TableProtocol.allCases)
    func answerStillComingEndsAtTheTotalDeadline(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in .trickle(length: 3000, interval: 0.1) }) { service in
            let clock = ManualWallClock()
            let context = try context(folder, service, idle: 4, total: 2, speaking: spoken, clock: clock)
            try await context.table("todoitem").insert(["id": "a", "text": "mine"])
            let error = await clock.passingEveryDeadline { await failure { _ = try await context.push() } }
            #expect(error == .stopped(.tooSlow(seconds: 2)))
            #expect(try queueShape(context) == ["insert a attempted"])
            #expect(error?.description.contains("took longer than 2 s") == true)
        }
    }

    @Test(arguments: TableProtocol.allCases)
    func answerThatStopsComingEndsAtTheIdleDeadline(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in .trickle(length: 1000, interval: 60) }) { service in
            let clock = ManualWallClock()
            let context = try context(folder, service, idle: 1, total: 50, speaking: spoken, clock: clock)
            let error = await clock.passingEveryDeadline {
                await failure { _ = try await context.table("todoitem").pull(queryId: "q") }
            }
            #expect(error == .stopped(.stalled(seconds: 1)))
        }
    }

    /// The clock passes the total deadline once the service pours: the answer that never ends ends
    /// there.
    @Test(arguments: TableProtocol.allCases)
    func neverEndingBodyEndsAtTheTotalDeadlineWithAReadableError(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in .endless }) { service in
            let clock = ManualWallClock()
            let context = try context(folder, service, idle: 10, total: 2, speaking: spoken, clock: clock)
            let pulling = Task { await failure { _ = try await context.table("todoitem").pull() } }
            await service.requestsArrived(1)
            clock.advance(by: 2)
            let error = await pulling.value
            #expect(error == .stopped(.tooSlow(seconds: 2)))
            #expect(error?.description.contains("Optional") == false)
        }
    }

    @Test func anAnswerLargerThanTheLimitIsAServiceFault() throws {
        let transport = HTTPTransport(
            baseURL: URL(string: "http://127.0.0.1:1")!, applicationKey: nil,
            deadlines: ExchangeDeadlines(idle: 1, total: 1, clock: SystemWallClock()))
        let error = transport.describe(ResponseAccumulator.ResponseTooBigError(maxBodySize: 1), url: "")
        #expect(error == .serviceFault(.answerTooLarge(limit: HTTPTransport.maximumBody)))
        #expect(error.description.contains("larger than 64 MB"), "\(error.description)")
    }

    // MARK: Change channel

    @Test func aChangeStreamThatFallsSilentIsOpenedAgainAfterTheIdleDeadline() async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in .silentEventStream }) { service in
            let clock = ManualWallClock()
            let context = try context(folder, service, idle: 1, clock: clock)
            let (states, stated) = AsyncStream.makeStream(of: Bool.self)
            let following = Task {
                await context.followChanges(of: "todoitem", connected: { stated.yield($0) }, changed: {})
            }
            var seen = states.makeAsyncIterator()
            #expect(await seen.next() == true)
            clock.advance(by: 1)
            #expect(await seen.next() == false, "silent for the idle deadline: dropped")
            // The pause before opening it again (½ s at most after one failure) is on the clock too.
            await clock.someoneSleeps()
            clock.advance(by: 0.5)
            #expect(await seen.next() == true)
            #expect(service.requests.count == 2)
            following.cancel()
            #expect(await following.value == .cancelled)
        }
    }

    // MARK: Pull progress

    @Test(arguments: TableProtocol.allCases)
    func pagesIgnoringTheFilterWithFreshIdsAreCaughtWithinAFewPages(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        let instant = "2026-01-01T00:00:00.000Z"
        try await withMisbehavingService(answering: { _ in
            self.page((0..<50).map { _ in self.row(UUID().uuidString.lowercased(), instant) }, spoken)
        }) { service in
            let context = try context(folder, service, speaking: spoken)
            let error = await failure { _ = try await context.table("todoitem").pull(queryId: "q") }
            guard case .serviceFault(.ignoredFilter(table: "todoitem", _))? = error else {
                Issue.record("expected the ignored filter to be named, got \(String(describing: error))")
                return
            }
            #expect(service.requests.count <= 3)
            #expect(try context.table("todoitem").count() == 50)
        }
    }

    @Test(arguments: TableProtocol.allCases)
    func pagesRepeatingForeverAreCaught(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        let instant = "2026-01-01T00:00:00.000Z"
        let rows = (0..<10).map { row("r\($0)", instant) }
        try await withMisbehavingService(answering: { _ in self.page(rows, spoken) }) { service in
            let context = try context(folder, service, speaking: spoken)
            let error = await failure { _ = try await context.table("todoitem").pull(queryId: "q") }
            #expect(error == .serviceFault(.repeatedPages(table: "todoitem")))
            #expect(service.requests.count <= 5)
            #expect(try context.table("todoitem").count() == 10)
        }
    }

    @Test(arguments: TableProtocol.allCases)
    func updatedAtGoingBackwardsIsCaught(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in
            self.page([self.row("a", "2026-01-01T00:00:02.000Z"), self.row("b", "2026-01-01T00:00:01.000Z")], spoken)
        }) { service in
            let context = try context(folder, service, speaking: spoken)
            let error = await failure { _ = try await context.table("todoitem").pull(queryId: "q") }
            #expect(
                error
                    == .serviceFault(
                        .updatedAtWentBackwards(
                            table: "todoitem", from: "2026-01-01T00:00:02.000Z", to: "2026-01-01T00:00:01.000Z")))
            #expect(try context.table("todoitem").count() == 0)
        }
    }

    @Test(arguments: TableProtocol.allCases)
    func rowOutsideTheQueryIsCaughtAndItsPageNotWritten(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        try await withMisbehavingService(answering: { _ in
            self.page(
                [
                    self.row("open", "2026-01-01T00:00:01.000Z"),
                    self.row("done", "2026-01-01T00:00:02.000Z", complete: true),
                ], spoken)
        }) { service in
            let context = try context(folder, service, speaking: spoken)
            let error = await failure {
                _ = try await context.table("todoitem").pull(
                    query: TableQuery(where: .equal("complete", .bool(false))), queryId: "open")
            }
            #expect(error == .serviceFault(.rowOutsideQuery(table: "todoitem", rowId: "done")))
            #expect(try context.table("todoitem").count() == 0)
        }
    }

    // MARK: Push answers about another item

    @Test(arguments: [("POST", 201), ("POST", 409), ("PATCH", 200), ("PATCH", 412)])
    func pushAnswerAboutAnotherItemWritesNothingAndKeepsTheOperation(method: String, status: Int) async throws {
        let folder = try TemporaryFolder()
        let victim = #"{"id":"victim","text":"the service's text","complete":true,"version":"v9"}"#
        try await withMisbehavingService(answering: { _ in .json(status, victim) }) { service in
            let context = try context(folder, service)
            try await context.write { db in
                try context.store.writeItem(
                    db, table: .todoItem, item: ["id": "victim", "text": "synced", "complete": false, "version": "v1"])
                try context.store.writeItem(
                    db, table: .todoItem, item: ["id": "mine", "text": "before", "complete": false, "version": "v1"])
            }
            if method == "POST" {
                try await context.table("todoitem").insert(["id": "new", "text": "mine"])
            } else {
                try await context.table("todoitem").update(["id": "mine", "text": "after"])
            }
            let sent = method == "POST" ? "new" : "mine"
            let error = await failure { _ = try await context.push() }
            #expect(
                error
                    == .serviceFault(
                        .answerAboutAnotherItem(
                            status: HTTPResponse.Status(code: status), sent: sent, received: "victim")))
            #expect(error?.description.contains("'victim'") == true)
            #expect(try queueShape(context) == ["\(method == "POST" ? "insert" : "update") \(sent) attempted"])
            #expect(try context.table("todoitem").item(id: "victim")?.text == "synced")
            #expect(try context.table("todoitem").item(id: "victim")?.version == "v1")
            #expect(try context.conflicts.all().isEmpty)
        }
    }
}
