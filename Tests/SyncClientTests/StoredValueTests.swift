import Foundation
import GRDB
import TestSupport
import Testing

@testable import SyncClient

/// The store's own tables are read by column name, and a value this version does not know is a
/// corrupt store, named, never a default.
@Suite struct StoredValueTests {
    static func corruption(_ error: SyncError?) -> StoreFailure? {
        guard case .storage(let failure)? = error, failure.kind == .corrupt else { return nil }
        return failure
    }

    @Test(arguments: [("kind", "'upsert'"), ("state", "'parked'"), ("queuedAt", "'yesterday'")])
    func aQueuedChangeHoldingAnUnknownValueIsACorruptStoreNamingIt(_ column: String, _ value: String) async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE __operations SET \(column) = \(value)") }

        let error = #expect(throws: SyncError.self) { try context.operations() }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__operations.\(column) holds \(value)"), "\(failure.description)")
        #expect(throws: SyncError.self) { try context.operationsPage(.first) }
        try await context.close()
    }

    /// A change of a kind it does not know is not pushed as an update.
    @Test func aQueuedChangeOfAnUnknownKindStopsThePushAndNothingIsSent() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: service.endpoint))
        try context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE __operations SET kind = 'upsert'") }

        let error = await #expect(throws: SyncError.self) { try await context.push() }
        #expect(Self.corruption(error) != nil, "\(String(describing: error))")
        #expect(try await service.rest.get("todoitem", "a") == nil, "nothing was sent")
        try await context.close()
        await service.stop()
    }
}
