import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Each policy, run by a real push against the real table service, and the journal it leaves.
@Suite(.timeLimit(.minutes(10)))
struct ConflictPolicyTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// A client holding `a` ("milk", not complete) from the server; then `client` is applied locally
    /// and `server` on the service.
    func conflict(policy: ConflictPolicy, client: Item, server: Item, remote: URL? = nil) async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: remote ?? service.endpoint, policy: policy)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", server)
        try await context.table("todoitem").update(client.merging(["id": "a"]) { $1 })
        return context
    }

    @Test func mergeIsTheDefaultPolicyOfEveryTable() throws {
        let context = try SyncContext(path: folder.file("default.sqlite"))
        #expect(try context.conflicts.policy(for: "todoitem") == .merge)
    }

    @Test func mergePolicyPushesOneSidedChangesWithTheServersVersionAndJournalsIt() async throws {
        let context = try await conflict(policy: .merge, client: ["text": "oat milk"], server: ["complete": true])
        let result = try await context.push()
        #expect(result.pushed == [1])
        #expect(result.conflicts.isEmpty)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "oat milk")
        #expect(server["complete"] == .bool(true))
        #expect(try context.table("todoitem").item(id: "a")?.version == server.version)
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .merge && entry.decidedBy == .merge)
        #expect(entry.base?.text == "milk" && entry.client?.text == "oat milk")
        #expect(entry.server?["complete"] == .bool(true) && entry.server?.text == "milk")
        #expect(entry.result?.text == "oat milk" && entry.result?["complete"] == .bool(true))
        #expect(entry.versionAfter == server.version)
        #expect(entry.versionBefore != nil && entry.versionBefore != entry.versionAfter)
    }

    /// Only what the policy leaves is stored: a conflict it settles is never written as one (before,
    /// an `__errors` row was written and deleted again in the same transaction).
    @Test func aConflictThePolicySettlesIsNeverStoredAsOne() async throws {
        let context = try await conflict(policy: .merge, client: ["text": "oat milk"], server: ["complete": true])
        try await context.write { db in
            // On the writer's connection, which every push transaction uses.
            try db.execute(
                sql: """
                    CREATE TEMP TABLE errorWrites (n INTEGER);
                    CREATE TEMP TRIGGER errorWritten AFTER INSERT ON main.__errors
                    BEGIN INSERT INTO errorWrites VALUES (1); END
                    """)
        }
        #expect(try await context.push().pushed == [1])
        #expect(try await context.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM errorWrites") } == 0)
        // A collision waits for a person: that one is stored.
        _ = try await service.rest.patch("a", ["text": "soy milk"])
        try await context.table("todoitem").update(["id": "a", "text": "rice milk"])
        #expect(try await context.push().conflicts.count == 1)
        #expect(try await context.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM errorWrites") } == 1)
    }

    @Test func mergePolicyAsksOnlyWhenTheSameFieldCollides() async throws {
        let context = try await conflict(policy: .merge, client: ["text": "oat milk"], server: ["text": "soy milk"])
        let result = try await context.push()
        #expect(result.conflicts == [1])
        #expect(try context.journal.entries().entries.isEmpty, "nothing was decided yet")
        #expect(try await service.rest.get("todoitem", "a")?.text == "soy milk")
    }

    @Test func mergePolicyTreatsTheSameValueOnBothSidesAsNoConflict() async throws {
        let context = try await conflict(policy: .merge, client: ["text": "oat milk"], server: ["text": "oat milk"])
        let result = try await context.push()
        #expect(result.pushed == [1], "the service already holds what was sent")
        #expect(result.conflicts.isEmpty)
        #expect(try context.operations.all().isEmpty)
        #expect(try context.journal.entries().entries.isEmpty, "nothing needed deciding")
    }

    @Test func askPolicyPromptsEvenForChangesToDifferentFields() async throws {
        let context = try await conflict(policy: .ask, client: ["text": "oat milk"], server: ["complete": true])
        #expect(try await context.push().conflicts == [1])
        #expect(try context.journal.entries().entries.isEmpty)
    }

    @Test func serverWinsPolicyTakesTheServersItemAndJournalsThePolicy() async throws {
        let context = try await conflict(policy: .serverWins, client: ["text": "oat milk"], server: ["text": "soy"])
        #expect(try await context.push().resolved == [1])
        #expect(try context.table("todoitem").item(id: "a")?.text == "soy")
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .useServer && entry.decidedBy == .serverWins)
        #expect(entry.result?.text == "soy")
    }

    @Test func clientWinsPolicyPushesTheLocalItemAndJournalsThePolicy() async throws {
        let context = try await conflict(policy: .clientWins, client: ["text": "oat milk"], server: ["text": "soy"])
        #expect(try await context.push().pushed == [1])
        #expect(try await service.rest.get("todoitem", "a")?.text == "oat milk")
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .useClient && entry.decidedBy == .clientWins)
        #expect(entry.server?.text == "soy" && entry.result?.text == "oat milk")
    }

    @Test func aTablesPolicyIsSavedInTheStoreAndOverridesTheDefault() async throws {
        let path = folder.file("policy.sqlite")
        let context = try SyncContext(path: path)
        try await context.conflicts.setPolicy(.serverWins, for: "todoitem")
        let reopened = try SyncContext(path: path)
        #expect(try reopened.conflicts.policy(for: "todoitem") == .serverWins)
        await #expect(throws: SyncError.unknownTable("nope")) {
            try await reopened.conflicts.setPolicy(.ask, for: "nope")
        }
    }

    @Test func personsDecisionsAreJournaledAndCancelIsNot() async throws {
        let context = try await conflict(policy: .ask, client: ["text": "oat milk"], server: ["text": "soy"])
        _ = try await context.push()
        try await context.conflicts.resolve(1, with: .cancel)
        #expect(try context.journal.entries().entries.isEmpty)
        _ = try await context.push()
        try await context.conflicts.resolve(1, with: .useServer)
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .useServer && entry.decidedBy == .person)
        #expect(entry.client?.text == "oat milk" && entry.server?.text == "soy" && entry.base?.text == "milk")
    }

    @Test func aPerFieldPickPushesEachFieldFromTheChosenSide() async throws {
        let context = try await conflict(
            policy: .ask, client: ["text": "oat milk", "complete": true], server: ["text": "soy", "complete": false])
        _ = try await context.push()
        let preview = try context.conflicts.pickPreview(1, picking: ["text": .base])
        #expect(preview.text == "milk" && preview["complete"] == .bool(true))
        #expect(try await context.conflicts.resolve(1, picking: ["text": .server, "complete": .client]) == .pushed)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "soy" && server["complete"] == .bool(true))
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .pick && entry.result?.text == "soy")
    }

    @Test func aPickLeavingACollidingFieldOpenIsRefusedWithoutTouchingAnything() async throws {
        let context = try await conflict(policy: .ask, client: ["text": "oat milk"], server: ["text": "soy"])
        _ = try await context.push()
        await #expect(throws: ConflictDecisionError.pick(.missingPick("text"))) {
            try await context.conflicts.resolve(1, picking: [:])
        }
        #expect(try context.conflicts.conflict(1) != nil)
        #expect(try await service.rest.get("todoitem", "a")?.text == "soy")
    }

    @Test func anInsertMeetingAnExistingIdIsATwoWayConflict() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await service.rest.insert(["id": "b", "text": "theirs", "complete": false])
        try await context.table("todoitem").insert(["id": "b", "text": "mine", "complete": false])
        #expect(try await context.push().conflicts == [1])
        let conflict = try #require(try context.conflicts.conflict(1))
        guard case .collision(let fields) = context.conflicts.merge(of: conflict) else {
            Issue.record("an insert against an existing id has no base: different fields collide")
            return
        }
        #expect(fields.map(\.name) == ["text"])
    }

    @Test func serverDeletedWhatWasEditedWaitsForAPersonUnderMerge() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk"])
        _ = try await context.table("todoitem").pull()
        try await service.rest.delete("a")
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        #expect(try await context.push().conflicts == [1])
        #expect(
            context.conflicts.merge(of: try #require(try context.conflicts.conflict(1))) == .serverDeletedClientEdited)
    }

    @Test func deletedHereWhatTheServerEditedWaitsForAPersonUnderMerge() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk"])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", ["text": "soy"])
        try await context.table("todoitem").delete(id: "a")
        #expect(try await context.push().conflicts == [1])
        #expect(
            context.conflicts.merge(of: try #require(try context.conflicts.conflict(1))) == .clientDeletedServerEdited)
    }
}
