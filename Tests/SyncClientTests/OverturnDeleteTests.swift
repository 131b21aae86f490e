import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Overturning outcomes that deleted an item (it comes back with the values that lost) and outcomes
/// that kept an item the losing side had deleted (it goes), against the real table service, which
/// keeps deleted rows (soft delete).
@Suite(.timeLimit(.minutes(10)))
struct OverturnDeleteTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// "milk" pulled by the client; then the service deletes it while the client edits it to "oat milk".
    func serverDeletedWhatWasEdited() async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        try await service.rest.delete("a")
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        #expect(try await context.push().conflicts == [1])
        #expect(try context.conflicts.conflict(1)?.deletedOnServer == true)
        return context
    }

    /// "milk" pulled by the client; then the client deletes it while the service edits it to "soy milk".
    func clientDeletedWhatTheServerEdited() async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", ["text": "soy milk"])
        try await context.table("todoitem").delete(id: "a")
        #expect(try await context.push().conflicts == [1])
        return context
    }

    func newestEntry(_ context: SyncContext) throws -> JournalEntry {
        try #require(try context.journal.entries().entries.first)
    }

    @Test func overturningAcceptTheDeleteRecreatesTheItemWithTheLocalValues() async throws {
        let context = try await serverDeletedWhatWasEdited()
        try await context.conflicts.useServer(1)
        let accepted = try newestEntry(context)
        #expect(accepted.result == nil && accepted.losingValues?.text == "oat milk")
        #expect(try context.table("todoitem").item(id: "a") == nil)

        #expect(try await context.journal.overturn(accepted.id) == .pushed)
        let server = try #require(try await service.rest.get("todoitem", "a"), "undeleted on the service")
        #expect(server.text == "oat milk")
        #expect(try context.table("todoitem").item(id: "a")?.version == server.version)
        #expect(try context.operations.all().isEmpty)
        let overturn = try newestEntry(context)
        #expect(overturn.decision == .overturn && overturn.overturns == accepted.id)
        #expect(overturn.operation == .insert)
        #expect(overturn.result?.text == "oat milk" && overturn.versionAfter == server.version)
        #expect(try await service.rest.all().count == 1, "the deleted row came back; no second row")
    }

    @Test func overturningDeleteItAnywayBringsBackTheServersVersion() async throws {
        let context = try await clientDeletedWhatTheServerEdited()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        #expect(try await service.rest.get("todoitem", "a") == nil)
        let deleted = try newestEntry(context)
        #expect(deleted.result == nil && deleted.losingValues?.text == "soy milk")

        #expect(try await context.journal.overturn(deleted.id) == .pushed)
        #expect(try await service.rest.get("todoitem", "a")?.text == "soy milk")
        #expect(try context.table("todoitem").item(id: "a")?.text == "soy milk")
        #expect(try newestEntry(context).overturns == deleted.id)
    }

    @Test func overturningRestoreItWithYourValuesDeletesItAgain() async throws {
        let context = try await serverDeletedWhatWasEdited()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        #expect(try await service.rest.get("todoitem", "a")?.text == "oat milk")
        let restored = try newestEntry(context)
        #expect(restored.losingValues == nil)

        #expect(try await context.journal.overturn(restored.id) == .pushed)
        #expect(try await service.rest.get("todoitem", "a") == nil)
        #expect(try context.table("todoitem").item(id: "a") == nil)
        let overturn = try newestEntry(context)
        #expect(overturn.operation == .delete && overturn.result == nil && overturn.versionAfter == nil)
        #expect(overturn.versionBefore == restored.versionAfter)
    }

    @Test func overturningKeepTheServersVersionDeletesIt() async throws {
        let context = try await clientDeletedWhatTheServerEdited()
        try await context.conflicts.useServer(1)
        #expect(try context.table("todoitem").item(id: "a")?.text == "soy milk")
        let kept = try newestEntry(context)

        #expect(try await context.journal.overturn(kept.id) == .pushed)
        #expect(try await service.rest.get("todoitem", "a") == nil)
        #expect(try context.table("todoitem").item(id: "a") == nil)
    }

    @Test func overturningTheOverturnDeletesTheRecreatedItemAgain() async throws {
        let context = try await serverDeletedWhatWasEdited()
        try await context.conflicts.useServer(1)
        #expect(try await context.journal.overturn(try newestEntry(context).id) == .pushed)
        #expect(try await context.journal.overturn(try newestEntry(context).id) == .pushed)
        #expect(try await service.rest.get("todoitem", "a") == nil)
        #expect(try context.journal.entries().entries.map(\.decision) == [.overturn, .overturn, .useServer])
    }

    @Test func recreatingAnItemThatCameBackMeanwhileIsANewConflict() async throws {
        let context = try await serverDeletedWhatWasEdited()
        try await context.conflicts.useServer(1)
        let accepted = try newestEntry(context)
        // Another device brings the todo back and changes it.
        #expect(try await service.rest.send(.post, "/tables/todoitem/a").status == 201)
        _ = try await service.rest.patch("a", ["text": "back again"])

        #expect(try await context.journal.overturn(accepted.id) == .conflict)
        #expect(try await service.rest.get("todoitem", "a")?.text == "back again", "not overwritten")
        let conflict = try #require(try context.conflicts.all().first)
        #expect(conflict.serverItem?.text == "back again" && conflict.clientItem?.text == "oat milk")
        #expect(try context.journal.entries().entries.count == 1, "nothing decided yet")
    }

    @Test func deletingAnItemThatChangedMeanwhileIsANewConflict() async throws {
        let context = try await serverDeletedWhatWasEdited()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        let restored = try newestEntry(context)
        _ = try await service.rest.patch("a", ["text": "changed again"])

        #expect(try await context.journal.overturn(restored.id) == .conflict)
        #expect(try await service.rest.get("todoitem", "a")?.text == "changed again", "not deleted")
        #expect(try context.conflicts.all().first?.serverItem?.text == "changed again")
        #expect(try context.journal.entries().entries.count == 1)
    }
}
