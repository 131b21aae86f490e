import FaultProxy
import Foundation
import SyncClient
import SyncProtocol
import Testing

/// Answers that are lost, cut or garbled after the service applied a change: the client must
/// recognise its own change instead of dropping the version or conflicting with itself.
/// Runs `body` with a harness whose client has pushed `s0` ("seed") cleanly, then stops the
/// harness; `retries` as in ``ReliabilityHarness/client(_:direct:timeout:retries:)``.
private func withSeededHarness(
    retries: Int = 4, _ body: (ReliabilityHarness, SyncContext) async throws -> Void
) async throws {
    try await withReliabilityHarness { harness in
        let context = try harness.client(retries: retries)
        try await context.table("todoitem").insert(["id": "s0", "text": "seed", "complete": false])
        _ = try await context.push()
        try await body(harness, context)
    }
}

@Suite struct LostAnswerTests {
    @Test func updateWhoseAnswerIsGarbledStillAdoptsTheServersVersion() async throws {
        try await withSeededHarness { harness, context in
            let table = context.table("todoitem")
            try await table.update(["id": "s0", "text": "edited"])
            harness.proxy.setPlan(FaultPlan([FaultRule(.corruptBody, method: "PATCH", nth: 1)]))
            _ = try await context.push()
            let server = try await harness.serviceRows()
            #expect(try table.item(id: "s0")?["version"] == server["s0"]?["version"])
            // The next edit is based on the right version: no conflict with ourselves.
            try await table.update(["id": "s0", "text": "edited twice"])
            let result = try await context.push()
            #expect(result.conflicts.isEmpty)
            try await expectConverged(context, harness)
        }
    }

    @Test func insertWhoseAnswersAreAllGarbledStopsInsteadOfCallingItDeleted() async throws {
        try await withReliabilityHarness(plan: .always(.corruptBody)) { harness in
            let context = try harness.client()
            try await context.table("todoitem").insert(["id": "n0", "text": "new"])
            for _ in 0..<2 {
                await #expect(throws: SyncError.self) { _ = try await context.push() }
                #expect(try context.operations.all().map(\.state) == [.attempted])
            }
            harness.proxy.setPlan(.passThrough)
            #expect(try await context.push().conflicts.isEmpty)
            try await context.table("todoitem").pull(queryId: "all")
            try await expectConverged(context, harness)
        }
    }
}

/// An update (or insert) that reached the service while every answer to it was lost, then
/// edited or deleted locally: the retry must recognise the earlier attempt as its own. The client
/// sends nothing again within a push (`retries: 0`), so that each lost answer stops its push and
/// the edit comes between two attempts, as after the last retry on a link that keeps dropping.
@Suite struct LostUpdateAnswerTests {
    @Test func editAfterLostUpdateAnswersIsPushedWithoutConflict() async throws {
        try await withSeededHarness(retries: 0) { harness, context in
            let table = context.table("todoitem")
            try await table.update(["id": "s0", "text": "first"])
            // The first PATCH lands but its answer is lost; so is the answer of the retry (a 412).
            harness.proxy.setPlan(FaultPlan([FaultRule(.resetMidResponse, method: "PATCH", nth: 1)]))
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            try await table.update(["id": "s0", "text": "second"])
            harness.proxy.setPlan(FaultPlan([FaultRule(.dropResponse, method: "PATCH", nth: 1)]))
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            harness.proxy.setPlan(.passThrough)
            let result = try await context.push()
            #expect(result.conflicts.isEmpty)
            #expect(try await harness.serviceRows()["s0"]?["text"] == "second")
            try await expectConverged(context, harness)
        }
    }

    @Test func aRetryAfterALostAnswerSendsOnlyTheUsersChangesNotStaleColumns() async throws {
        try await withSeededHarness(retries: 0) { harness, context in
            let table = context.table("todoitem")
            try await table.update(["id": "s0", "text": "first"])
            // The PATCH lands, its answer is lost; meanwhile another device changes another column.
            harness.proxy.setPlan(FaultPlan([FaultRule(.dropResponse, method: "PATCH", nth: 1)]))
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            let version = try #require(try await harness.serviceRows()["s0"]?["version"]?.stringValue)
            _ = try await harness.service.rest.send(
                .patch, "/tables/todoitem/s0", body: ["complete": true], ifMatch: version)
            try await table.update(["id": "s0", "text": "second"])
            harness.proxy.setPlan(.passThrough)
            #expect(try await context.push().conflicts.isEmpty)
            let server = try #require(try await harness.serviceRows()["s0"])
            #expect(server["text"] == "second")
            #expect(server["complete"] == true, "the other device's edit is kept, not overwritten by the stale copy")
            try await context.table("todoitem").pull(queryId: "all")
            try await expectConverged(context, harness)
        }
    }

    @Test func deleteAfterALostUpdateAnswerDeletesWithoutConflict() async throws {
        try await withSeededHarness(retries: 0) { harness, context in
            let table = context.table("todoitem")
            try await table.update(["id": "s0", "text": "first"])
            harness.proxy.setPlan(FaultPlan([FaultRule(.dropResponse, method: "PATCH", nth: 1)]))
            // A lost answer costs one request timeout (5 s here).
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            try await table.delete(id: "s0")
            harness.proxy.setPlan(.passThrough)
            let result = try await context.push()
            #expect(result.conflicts.isEmpty)
            #expect(try await harness.serviceRows()["s0"]?["deleted"] == true)
            try await expectConverged(context, harness)
        }
    }

    @Test func insertEditedAfterTwoLostAnswersIsPushedWithoutConflict() async throws {
        try await withReliabilityHarness(
            plan: FaultPlan([FaultRule(.dropResponse, method: "POST", nth: 1)])
        ) { harness in
            let context = try harness.client(retries: 0)
            let table = context.table("todoitem")
            try await table.insert(["id": "n0", "text": "first"])
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            try await table.update(["id": "n0", "text": "second"])
            harness.proxy.setPlan(FaultPlan([FaultRule(.resetMidResponse, method: "POST", nth: 1)]))
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            harness.proxy.setPlan(.passThrough)
            let result = try await context.push()
            #expect(result.conflicts.isEmpty)
            #expect(try await harness.serviceRows()["n0"]?["text"] == "second")
            try await expectConverged(context, harness)
        }
    }
}
