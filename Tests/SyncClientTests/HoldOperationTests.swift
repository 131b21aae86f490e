import FaultProxy
import Foundation
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct HoldOperationTests {
    @Test func aHeldOperationIsNotPushedAndARelasedOneIs() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "held back"])
        try await todo.insert(["id": "b", "text": "goes"])

        #expect(try await context.operations.hold(1, reason: "waiting for the review"))
        #expect(try await context.operations.hold(1) == false)
        let status = try context.status()
        #expect(status.held == 1 && status.pending == 1 && status.operations == 2)
        #expect(try context.operations.countsByTable()["todoitem"] == TableQueueCounts(waiting: 1, held: 1))

        let first = try await context.push()
        #expect(first.pushed == [2])
        #expect(
            !proxy.requests.contains { $0.hasSuffix("/a") } && proxy.requests.filter { $0.hasPrefix("POST") }.count == 1
        )
        #expect(try await service.rest.get("todoitem", "a") == nil)
        let held = try #require(try context.operations.operation(1))
        #expect(held.state == .pending && held.attempts == 0)
        #expect(held.hold?.reason == "waiting for the review")

        #expect(try await context.operations.release(1))
        #expect(try await context.operations.release(1) == false)
        #expect(try await context.push().pushed == [1])
        #expect(try await service.rest.get("todoitem", "a")?.text == "held back")
        let kinds = try context.table("todoitem").history(id: "a").events.map(\.kind)
        #expect(kinds == [.localInsert, .held, .released, .pushed])
    }

    @Test func anEditOfAHeldItemJoinsTheHeldOperationAndStaysHeld() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        try await context.operations.hold(1, reason: "not yet")
        try await todo.update(["id": "a", "text": "two"])

        #expect(try queueShape(context) == ["insert a pending"])
        let operation = try #require(try context.operations.operation(1))
        #expect(operation.isHeld && operation.hold?.reason == "not yet")
        #expect(try todo.item(id: "a")?.text == "two")
        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.localInsert, .held, .localUpdate])
        #expect(history.explanation.contains("is held (since "))
        #expect(history.explanation.hasSuffix("it is not pushed until you release it."))
        #expect(history.events[1].summary.contains("because: not yet"))
    }

    @Test func holdingAnOperationKeepsTheItemsLaterOperationsBack() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        // An edit made while the insert was on the wire queues a second operation behind it.
        _ = try await context.write { db in
            try context.queue.insert(
                db,
                TableOperation(
                    id: 0, table: "todoitem", itemId: "a", kind: .update, state: .pending, item: nil, base: nil,
                    attempts: 0, queuedAt: Date(), lastAttemptAt: nil, lastStatus: nil, message: nil))
        }
        try await todo.insert(["id": "b", "text": "other"])
        try await context.operations.hold(1)

        let sendable = try context.read { db in try context.queue.sendable(db).map(\.id) }
        #expect(sendable == [3])
        #expect(try await context.push().pushed == [3])
        #expect(try context.operations.all().map(\.id) == [1, 2])
        #expect(try context.operations.operation(2)?.attempts == 0)
        await #expect(throws: SyncError.operationWaitsBehind(2, earlier: 1)) {
            try await context.operations.prepareRetry(2)
        }

        try await context.operations.release(1)
        #expect(try await context.push().pushed == [1, 2])
        #expect(try await service.rest.get("todoitem", "a")?.text == "one")
    }

    @Test func retryNowMakesARefusedOperationPendingAndPushesIt() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let proxy = try await service.proxy()
        let refusing = Mutex(true)
        proxy.intercept { request, _ in
            guard request.method == "POST", refusing.withLock({ $0 }) else { return nil }
            return .answer(
                ProxiedResponse(
                    status: 400, headers: ["Content-Type": "application/json"],
                    body: Array(#"{"error":"not today"}"#.utf8)))
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        #expect(try await context.push().failed == [1])
        #expect(try context.status().failed == 1)

        refusing.withLock { $0 = false }
        #expect(try await context.operations.retry(1) == .pushed)
        #expect(try context.operations.all().isEmpty)
        #expect(try await service.rest.get("todoitem", "a")?.text == "one")
    }

    @Test func retryOfAHeldOperationIsRefusedUntilReleased() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        try await context.operations.hold(1)
        await #expect(throws: SyncError.operationHeld(1)) { try await context.operations.prepareRetry(1) }
        let results = try await context.operations.perform(.retry, on: [1, 99])
        #expect(results.map(\.outcome) == [.refused, .refused])
        #expect(results[1].message?.contains("No queued operation #99") == true)
        #expect(try await context.operations.perform(.release, on: [1]).map(\.outcome) == [.done])
        #expect(try await context.operations.prepareRetry(1).state == .pending)
    }

    @Test func aHeldOperationIsAQueuedChangeForPurge() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        try await context.operations.hold(1)
        await #expect(throws: SyncError.pendingOperations(table: "todoitem", count: 1)) {
            try await context.table("todoitem").purge()
        }
    }

    @Test func aHoldReasonIsTrimmedAndLimited() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.self) {
            try await context.operations.hold(1, reason: String(repeating: "x", count: 501))
        }
        await #expect(throws: SyncError.self) { try await context.operations.hold(1, reason: "bell\u{7}") }
        #expect(try context.operations.operation(1)?.isHeld == false)
        try await context.operations.hold(1, reason: "  ")
        #expect(try context.operations.operation(1)?.hold?.reason == nil)
    }
}

/// One test per row of the hold and retry table (``QueueActionRule``).
@Suite struct QueueActionRuleTests {
    func decide(
        _ action: QueueAction, _ state: OperationState, held: Bool = false, earlier: Int64? = nil
    )
        -> QueueActionRule
    {
        QueueActionRule.decide(action, id: 5, state: state, isHeld: held, earlier: earlier)
    }

    @Test func nothingChangesAnOperationInFlight() {
        for action in QueueAction.allCases { #expect(decide(action, .inFlight) == .refuse(.operationInFlight(5))) }
    }

    @Test func holdAppliesToPendingAttemptedAndFailedOnes() {
        for state in [OperationState.pending, .attempted, .failed] {
            #expect(decide(.hold, state) == .apply)
            #expect(decide(.hold, state, held: true) == .unchanged)
        }
        #expect(decide(.hold, .pending, earlier: 4) == .apply)
    }

    @Test func aConflictIsDecidedNotHeldOrRetried() {
        #expect(decide(.hold, .conflict) == .refuse(.operationInConflict(5)))
        #expect(decide(.retry, .conflict) == .refuse(.operationInConflict(5)))
    }

    @Test func releaseAppliesOnlyToAHeldOne() {
        #expect(decide(.release, .pending, held: true) == .apply)
        #expect(decide(.release, .failed) == .unchanged)
    }

    @Test func retryWaitsForARelaseAndForTheItemsEarlierOperation() {
        #expect(decide(.retry, .failed) == .apply)
        #expect(decide(.retry, .pending) == .apply)
        #expect(decide(.retry, .failed, held: true) == .refuse(.operationHeld(5)))
        #expect(decide(.retry, .attempted, earlier: 4) == .refuse(.operationWaitsBehind(5, earlier: 4)))
    }

    @Test func discardAppliesToAnyOperationNotInFlight() {
        for state in [OperationState.pending, .attempted, .failed, .conflict] {
            #expect(decide(.discard, state, held: true) == .apply)
        }
    }
}
