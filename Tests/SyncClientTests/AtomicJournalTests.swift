import FaultProxy
import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// A decision's journal entry is stored by the same transaction as its local outcome: both exist
/// after every kind of outcome, and an outcome that cannot be stored leaves no entry (and is
/// completed, with its entry, by the next push).
@Suite(.timeLimit(.minutes(10)))
struct AtomicJournalTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// Operations 1...count in conflict (see ``TestService/changeOnBothSides(_:pulledBy:)``), in a
    /// store syncing with `remote` (the service when nil).
    func conflicts(_ count: Int, remote: URL? = nil) async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: remote ?? service.endpoint, policy: .ask)
        try await service.changeOnBothSides(count, pulledBy: context)
        #expect(try await context.push().conflicts.count == count)
        return context
    }

    /// Whether any decision still waits for the service's answer.
    func heldDecisions(_ context: SyncContext) throws -> Int {
        try context.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM __journal_pending") ?? 0 }
    }

    /// Makes every insert into `__journal` fail, as a full disk or a crash at that point would.
    func refuseJournalWrites(_ context: SyncContext, _ refuse: Bool) throws {
        let other = try sideConnection(context.path)
        defer { try? other.close() }
        try other.write { db in
            try db.execute(
                sql: refuse
                    ? "CREATE TRIGGER refuse BEFORE INSERT ON __journal BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                    : "DROP TRIGGER refuse")
        }
    }

    @Test func everyKindOfOutcomeIsStoredWithItsEntry() async throws {
        let context = try await conflicts(4)
        var expected: [JournalEntry.Decision] = []
        func check(_ decision: JournalEntry.Decision, item: String, text: String?) throws {
            expected.insert(decision, at: 0)
            #expect(try context.journal.entries().entries.map(\.decision) == expected)
            let entry = try #require(try context.journal.entries().entries.first)
            #expect(entry.itemId == item && entry.result?.text == text)
            #expect(try context.table("todoitem").item(id: item)?.text == text)
            #expect(try context.operations.of(table: "todoitem", itemId: item).isEmpty)
            #expect(try heldDecisions(context) == 0)
        }
        try await context.conflicts.useServer(1)
        try check(.useServer, item: "i0", text: "server 0")
        #expect(try await context.conflicts.useClient(2) == .pushed)
        try check(.useClient, item: "i1", text: "client 1")
        #expect(try await context.conflicts.resolve(3, picking: ["text": .base]) == .pushed)
        try check(.pick, item: "i2", text: "base 2")
        #expect(try await context.journal.overturn(try context.journal.entries().entries.last!.id) == .pushed)
        try check(.overturn, item: "i0", text: "client 0")
        try await context.queue.cancel(4)
        try await context.conflicts.setPolicy(.clientWins, for: "todoitem")
        #expect(try await context.push().pushed == [4])
        try check(.useClient, item: "i3", text: "client 3")
    }

    @Test func aMergeByPolicyIsStoredWithItsEntry() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", ["complete": true])
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        #expect(try await context.push().pushed == [1])
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .merge && entry.result?.text == "oat milk")
        #expect(entry.versionAfter == (try context.table("todoitem").item(id: "a")?.version))
        #expect(try heldDecisions(context) == 0)
    }

    @Test func anOutcomeThatCannotBeStoredLeavesNoEntryAndTheNextPushStoresBoth() async throws {
        let context = try await conflicts(1)
        try refuseJournalWrites(context, true)
        await #expect(throws: SyncError.self) { try await context.conflicts.useClient(1) }
        #expect(try context.journal.count() == 0, "no entry without its outcome")
        let onService = try #require(try await service.rest.get("todoitem", "i0"))
        #expect(onService.text == "client 0", "the service took it")
        #expect(try context.operations.all().map(\.state) == [.attempted], "no outcome without its entry")
        #expect(try context.table("todoitem").item(id: "i0")?.version != onService.version)

        try refuseJournalWrites(context, false)
        #expect(try await context.push().pushed == [1])
        let entry = try #require(try context.journal.entries().entries.first)
        #expect(entry.decision == .useClient && entry.result?.text == "client 0")
        #expect(entry.versionAfter == (try await service.rest.get("todoitem", "i0")?.version))
        #expect(try context.operations.all().isEmpty)
    }

    @Test func aDecisionCutOffBeforeItsAnswerIsJournaledByThePushAfterARestart() async throws {
        // The service goes away and comes back behind a proxy that keeps its port (a stopped
        // service's port may be taken by another test's service meanwhile).
        let proxy = try await service.proxy()
        let context = try await conflicts(1, remote: proxy.endpoint)
        proxy.setPlan(.always(.refuse))
        await #expect(throws: SyncError.self) { try await context.conflicts.useClient(1) }
        #expect(try heldDecisions(context) == 1 && context.journal.count() == 0)
        try await context.close()

        proxy.setPlan(.passThrough)
        let reopened = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        #expect(try await reopened.push().pushed == [1])
        let entry = try #require(try reopened.journal.entries().entries.first)
        #expect(entry.decision == .useClient && entry.result?.text == "client 0")
        #expect(try await service.rest.get("todoitem", "i0")?.text == "client 0")
        #expect(try heldDecisions(reopened) == 0)
        await proxy.stop()
    }

    @Test func aDecisionHeldByAStoreOfTheJSONLayoutIsJournaledAfterTheUpgrade() async throws {
        let proxy = try await service.proxy()
        let context = try await conflicts(1, remote: proxy.endpoint)
        proxy.setPlan(.always(.refuse))
        await #expect(throws: SyncError.self) { try await context.conflicts.useClient(1) }
        try await context.close()
        try storeHeldDecisionsAsJSON(at: context.path)

        proxy.setPlan(.passThrough)
        let reopened = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        #expect(try heldDecisions(reopened) == 1, "the held decision survives the upgrade")
        #expect(try await reopened.push().pushed == [1])
        let entry = try #require(try reopened.journal.entries().entries.first)
        #expect(entry.decision == .useClient && entry.decidedBy == .person)
        #expect(entry.client?.text == "client 0" && entry.server?.text == "server 0")
        #expect(entry.result?.text == "client 0")
        #expect(try reopened.journal.entries(JournalQuery(text: "server 0")).entries.map(\.id) == [entry.id])
        #expect(try heldDecisions(reopened) == 0)
        await proxy.stop()
    }

    /// Rewrites the store's held decisions as todosync wrote them before `v4-held-journal-columns`:
    /// one JSON `JournalEntry` per operation in `__journal_held`.
    func storeHeldDecisionsAsJSON(at path: String) throws {
        let database = try DatabaseQueue(path: path)
        defer { try? database.close() }
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE __journal_held (
                        operationId INTEGER PRIMARY KEY REFERENCES __operations (id) ON DELETE CASCADE,
                        entry TEXT NOT NULL)
                    """)
            for row in try Row.fetchAll(db, sql: "SELECT * FROM __journal_pending") {
                let entry = JournalEntry(
                    id: row["id"], sequence: 0, table: row["tableName"], itemId: row["itemId"],
                    operation: OperationKind(rawValue: row["operation"])!, base: ItemCoding.decode(row["base"]),
                    client: ItemCoding.decode(row["client"]), server: ItemCoding.decode(row["server"]), result: nil,
                    decision: JournalEntry.Decision(rawValue: row["decision"])!,
                    decidedBy: JournalEntry.Decider(rawValue: row["decidedBy"])!, versionBefore: row["versionBefore"],
                    versionAfter: nil, recordedAt: Date(), batch: row["batch"], overturns: row["overturns"])
                try db.execute(
                    sql: "INSERT INTO __journal_held (operationId, entry) VALUES (?, ?)",
                    arguments: [row["operationId"], String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)])
            }
            try db.execute(sql: "DROP TABLE __journal_pending")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v4-held-journal-columns'")
        }
    }

    @Test func aDecisionThatMeetsANewConflictHoldsNoEntry() async throws {
        let context = try await conflicts(1)
        // The Use Client is sent over the version the conflict saw; the service moves first.
        _ = try await service.rest.patch("i0", ["text": "server again"])
        #expect(try await context.conflicts.useClient(1) == .conflict)
        #expect(try heldDecisions(context) == 0)
        #expect(try context.journal.count() == 0)
    }
}
