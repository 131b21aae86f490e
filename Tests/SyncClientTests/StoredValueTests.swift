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

    /// A column type a newer todosync wrote is not read as "null": the store does not open.
    @Test func aColumnTypeItDoesNotKnowKeepsTheStoreFromOpeningNamingIt() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("store.sqlite")
        let context = try SyncContext(path: path)
        try context.table("todoitem").insert(["id": "a", "text": "kept"])
        try await context.store.pool.write { db in
            try db.execute(sql: "UPDATE __columns SET type = 'decimal128' WHERE columnName = 'text'")
        }
        try await context.close()

        let error = #expect(throws: SyncError.self) { _ = try SyncContext(path: path) }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__columns.type holds 'decimal128'"))
    }

    @Test func aRecordedExchangeOfAPurposeItDoesNotKnowIsNamedNotTakenForAPull() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO __exchanges (startedAt, milliseconds, method, target, purpose, tableName,
                        bytesSent, bytesReceived, requestHeaders, responseHeaders)
                    VALUES ('2026-11-27T10:00:00.000Z', 1, 'GET', '/tables/todoitem', 'replicate', 'todoitem',
                        0, 0, '', '')
                    """)
        }
        let error = #expect(throws: SyncError.self) { _ = try context.exchanges() }
        #expect(Self.corruption(error)?.description.contains("__exchanges.purpose holds 'replicate'") == true)
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
