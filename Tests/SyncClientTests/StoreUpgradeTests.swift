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
        #expect(try context.operations().isEmpty)
        let a = try await service.rest.get("todoitem", "a")
        #expect(a?.text == "second")
        #expect(try context.table("todoitem").item(id: "a")?.version == a?.version)
        #expect(try await service.rest.get("todoitem", "b")?.text == "plain")
    }
}
