import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// The journal of conflict outcomes: persistence, retention, paging, overturn and bulk undo,
/// against the real table service.
@Suite(.timeLimit(.minutes(10)))
struct ConflictJournalTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// `count` items pulled by the client, each then edited on both sides ("server i" / "client i"):
    /// after the push, operations 1...count are in conflict (policy ask).
    func conflicts(
        _ count: Int, path: String = "store.sqlite", remote: URL? = nil
    ) async throws -> SyncContext {
        let context = try SyncContext.temporary(
            in: folder, remote: remote ?? service.endpoint, name: path, policy: .ask)
        try await service.changeOnBothSides(count, pulledBy: context)
        #expect(try await context.push().conflicts.count == count)
        return context
    }

    @Test func theJournalSurvivesARestart() async throws {
        let context = try await conflicts(1)
        try await context.conflicts.useServer(1)
        let id = try #require(try context.journal.entries().entries.first?.id)
        try await context.close()
        let reopened = try SyncContext.temporary(in: folder, remote: service.endpoint)
        let entry = try #require(try reopened.journal.entry(id))
        #expect(entry.client?.text == "client 0" && entry.server?.text == "server 0")
        #expect(entry.decision == .useServer)
    }

    @Test func retentionKeepsTheNewestEntries() async throws {
        let context = try await conflicts(5)
        #expect(try context.retention(of: .journal) == 10_000)
        try await context.setRetention(of: .journal, to: 3)
        for id in Int64(1)...5 { try await context.conflicts.useServer(id) }
        let items = try context.journal.entries().entries.map(\.itemId)
        #expect(items == ["i4", "i3", "i2"])
        #expect(try context.journal.count() == 3)
    }

    @Test func pagesAreNewestFirstAndFiltersNarrowThem() async throws {
        let context = try await conflicts(5)
        for id in Int64(1)...3 { try await context.conflicts.useServer(id) }
        for id in Int64(4)...5 { #expect(try await context.conflicts.useClient(id) == .pushed) }
        let first = try context.journal.entries(JournalQuery(limit: 2))
        #expect(first.entries.map(\.itemId) == ["i4", "i3"])
        let second = try context.journal.entries(JournalQuery(before: first.next, limit: 2))
        #expect(second.entries.map(\.itemId) == ["i2", "i1"])
        #expect(try context.journal.entries(JournalQuery(before: second.next, limit: 2)).next == nil)
        #expect(try context.journal.entries(JournalQuery(decision: .useClient)).entries.count == 2)
        #expect(try context.journal.entries(JournalQuery(itemId: "i1")).entries.map(\.itemId) == ["i1"])
        #expect(try context.journal.entries(JournalQuery(text: "CLIENT 2")).entries.map(\.itemId) == ["i2"])
        #expect(try context.journal.entries(JournalQuery(text: "%")).entries.isEmpty, "LIKE wildcards are literal")
    }

    @Test func overturningAPersonsUseServerPushesTheLosingValues() async throws {
        let context = try await conflicts(1)
        try await context.conflicts.useServer(1)
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(try await context.journal.overturn(entry.id) == .pushed)
        #expect(try await service.rest.get("todoitem", "i0")?.text == "client 0")
        #expect(try context.table("todoitem").item(id: "i0")?.text == "client 0")
        let overturn = try #require(try context.journal.entries().entries.first)
        #expect(overturn.decision == .overturn && overturn.overturns == entry.id)
        #expect(overturn.versionBefore == entry.versionAfter)
        #expect(overturn.result?.text == "client 0")
    }

    @Test func overturningAPolicysMergeRestoresTheServersValues() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", ["complete": true])
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        #expect(try await context.push().pushed == [1])
        let merge = try #require(try context.journal.entries().entries.first)
        #expect(merge.decidedBy == .merge)
        #expect(try await context.journal.overturn(merge.id) == .pushed)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "milk" && server["complete"] == .bool(true))
    }

    @Test func overturnAfterTheServiceMovedIsANewConflictNotAnOverwrite() async throws {
        let context = try await conflicts(1)
        try await context.conflicts.useServer(1)
        let entry = try #require(try context.journal.entries().entries.first)
        _ = try await service.rest.patch("i0", ["text": "server again"])
        #expect(try await context.journal.overturn(entry.id) == .conflict)
        #expect(try await service.rest.get("todoitem", "i0")?.text == "server again")
        let conflict = try #require(try context.conflicts.all().first)
        #expect(conflict.serverItem?.text == "server again")
        #expect(conflict.clientItem?.text == "client 0")
        #expect(conflict.base?.text == "server 0")
        #expect(try context.journal.entries().entries.count == 1, "nothing decided yet")
    }

    @Test func overturnIsRefusedWhileTheItemHasANewerLocalChange() async throws {
        let context = try await conflicts(1)
        try await context.conflicts.useServer(1)
        let entry = try #require(try context.journal.entries().entries.first)
        try await context.table("todoitem").update(["id": "i0", "text": "newer"])
        await #expect(throws: ConflictDecisionError.newerLocalChange(entry: entry.id, itemId: "i0")) {
            try await context.journal.overturn(entry.id)
        }
        #expect(try context.table("todoitem").item(id: "i0")?.text == "newer")
        await #expect(throws: ConflictDecisionError.entryNotFound("nope")) {
            try await context.journal.overturn("nope")
        }
    }

    @Test func bulkUseServerOnSevenOfTenAndOneStepUndo() async throws {
        let context = try await conflicts(10)
        let chosen = Array(Int64(1)...7)
        let preview = try context.conflicts.bulkPreview(chosen, with: .useServer)
        #expect(preview.conflicts.count == 7)
        #expect(preview.fieldCounts == ["text": 7])
        let bulk = try await context.conflicts.resolve(chosen, with: .useServer)
        #expect(bulk.outcomes.count == 7)
        #expect(try context.conflicts.all().map(\.id) == [8, 9, 10])
        #expect(try context.journal.entries(JournalQuery(batch: bulk.batch)).entries.count == 7)
        for index in 0..<7 { #expect(try context.table("todoitem").item(id: "i\(index)")?.text == "server \(index)") }

        let undo = try await context.journal.undo(batch: bulk.batch)
        #expect(undo.overturned.count == 7)
        #expect(undo.overturned.values.allSatisfy { $0 == .pushed })
        let rows = try await service.rest.all()
        for index in 0..<10 {
            let text = rows.first { $0["id"] == .string("i\(index)") }?.text
            #expect(text == (index < 7 ? "client \(index)" : "server \(index)"))
        }
        #expect(try context.conflicts.all().map(\.id) == [8, 9, 10], "the other three still wait")
    }

    @Test func bulkUseClientPushesEveryChosenConflict() async throws {
        let context = try await conflicts(3)
        let bulk = try await context.conflicts.resolve([1, 3], with: .useClient)
        #expect(bulk.outcomes == [1: .pushed, 3: .pushed])
        #expect(try await service.rest.get("todoitem", "i2")?.text == "client 2")
        #expect(try await service.rest.get("todoitem", "i1")?.text == "server 1")
        let undo = try await context.journal.undo(batch: bulk.batch)
        #expect(undo.overturned.count == 2)
        #expect(try await service.rest.get("todoitem", "i2")?.text == "server 2")
    }
}

/// The same merge and overturn against another Mobile Apps server, named by
/// `TODOSYNC_OTHER_SERVICE_URL` (with a `todoitem` table); skipped when the variable is not set.
@Suite(
    .timeLimit(.minutes(10)),
    .enabled(
        if: ProcessInfo.processInfo.environment["TODOSYNC_OTHER_SERVICE_URL"] != nil,
        "set TODOSYNC_OTHER_SERVICE_URL to a Mobile Apps server to run these"))
struct OtherServiceConflictTests {
    @Test func mergeAndOverturnAgainstTheOtherService() async throws {
        let base = try #require(ProcessInfo.processInfo.environment["TODOSYNC_OTHER_SERVICE_URL"])
        let folder = try TemporaryFolder()
        let rest = TableClient(base: base)
        let id = "todosync-\(UUID().uuidString.lowercased())"
        let context = try SyncContext.temporary(in: folder, remote: URL(string: base)!, policy: .merge)
        _ = try await rest.insert(["id": .string(id), "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await rest.patch(id, ["complete": true])
        try await context.table("todoitem").update(["id": .string(id), "text": "oat milk"])
        #expect(try await context.push().conflicts.isEmpty)
        let server = try #require(try await rest.get("todoitem", id))
        #expect(server.text == "oat milk" && server["complete"] == .bool(true))
        let merge = try #require(try context.journal.entries(JournalQuery(itemId: id)).entries.first)
        #expect(try await context.journal.overturn(merge.id) == .pushed)
        #expect(try await rest.get("todoitem", id)?.text == "milk")
        try await rest.delete(id)
    }
}
