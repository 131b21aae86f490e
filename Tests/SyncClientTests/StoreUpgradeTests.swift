import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Stores written by earlier versions of todosync open, upgrade and sync.
struct StoreUpgradeTests {
    /// A store written by todosync before `v2-earlier-bodies`: the insert of `a` was sent twice and
    /// both answers were lost ("first", then "second", the first body hidden under `__earlier` in the
    /// operation's item), then `b` was added (pending, never sent).
    static let firstSchemaStore = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/store-v1.sqlite").path

    @Test func storeOfTheFirstSchemaUpgradesAndItsLostAnswerIsRecognised() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Self.firstSchemaStore, toPath: folder.file("store.sqlite"))
        let service = try await TestService.forSync(in: folder)
        // The first attempt had reached the service; only its answer was lost.
        try await service.rest.insert(["id": "a", "text": "first", "complete": false])

        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        #expect(try queueShape(context) == ["insert a attempted", "insert b pending"])
        let stored = try context.read { db in
            try Row.fetchAll(db, sql: "SELECT item, earlierBodies FROM __operations ORDER BY id")
        }
        let item: String = stored[0]["item"]
        let earlier: String? = stored[0]["earlierBodies"]
        #expect(!item.contains("__earlier"))
        #expect(item.contains("second"))
        #expect(earlier?.contains("first") == true)

        let result = try await context.push()
        #expect(result.pushed.count == 2)
        #expect(result.conflicts.isEmpty && result.failed.isEmpty)
        #expect(try context.operations.all().isEmpty)
        let a = try await service.rest.get("todoitem", "a")
        #expect(a?.text == "second")
        #expect(try context.table("todoitem").item(id: "a")?.version == a?.version)
        #expect(try await service.rest.get("todoitem", "b")?.text == "plain")
    }

    /// A store of v3 kept a decision waiting for the service's answer as JSON (`__journal_held`):
    /// the upgrade moves it into the journal's own columns, where settling copies it.
    @Test func aDecisionHeldAsJSONByAnOlderStoreIsMovedIntoColumns() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("store.sqlite")
        var migrator = DatabaseMigrator()
        for migration in LocalStore.migrations.prefix(while: { $0.name != "v4-held-journal-columns" }) {
            migrator.registerMigration(migration.name, migrate: migration.migrate)
        }
        let entry = JournalEntry(
            id: "entry-1", sequence: 0, table: "todoitem", itemId: "a", operation: .update, base: nil,
            client: ["id": "a", "text": "mine"], server: ["id": "a", "text": "theirs"], result: nil,
            decision: .useClient, decidedBy: .person, versionBefore: "MQ==", versionAfter: nil,
            recordedAt: Date(), batch: nil, overturns: nil)
        let json = String(decoding: try JSONEncoder().encode(entry), as: UTF8.self)
        let older = try DatabaseQueue(path: path)
        try migrator.migrate(older)
        try await older.write { db in
            try db.execute(
                sql: """
                    INSERT INTO __operations (id, tableName, itemId, kind, state, queuedAt)
                    VALUES (7, 'todoitem', 'a', 'update', 'pending', '2026-11-27T10:00:00.000Z');
                    INSERT INTO __journal_held (operationId, entry) VALUES (7, ?);
                    """, arguments: [json])
        }
        try older.close()

        let context = try SyncContext(path: path)
        let held = try context.store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM __journal_pending")
        }
        #expect(held?["operationId"] == 7 as Int64)
        #expect(held?["decision"] == "use-client" && held?["decidedBy"] == "person")
        #expect(held?["versionBefore"] == "MQ==")
        #expect((held?["searchText"] as String?)?.contains("theirs") == true)
        let jsonTableLeft = try await context.store.pool.read { db in try db.tableExists("__journal_held") }
        #expect(!jsonTableLeft)
        try await context.close()
    }
}
