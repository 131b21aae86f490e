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
        try await context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE __operations SET \(column) = \(value)") }

        let error = #expect(throws: SyncError.self) { try context.operations.all() }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__operations.\(column) holds \(value)"), "\(failure.description)")
        #expect(throws: SyncError.self) { try context.operations.page(.first) }
        try await context.close()
    }

    /// A column type a newer todosync wrote is not read as "null": the store does not open.
    @Test func aColumnTypeItDoesNotKnowKeepsTheStoreFromOpeningNamingIt() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("store.sqlite")
        let context = try SyncContext(path: path)
        try await context.table("todoitem").insert(["id": "a", "text": "kept"])
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

    @Test func anOperationErrorOfAKindItDoesNotKnowIsACorruptStoreNamingIt() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO __errors (operationId, kind, message, recordedAt)
                    SELECT id, 'timeout', 'written by a newer todosync', '2026-11-27T10:00:00.000Z' FROM __operations
                    """)
        }
        let id = try #require(try context.operations.all().first?.id)

        let error = #expect(throws: SyncError.self) { _ = try context.operations.error(of: id) }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__errors.kind holds 'timeout'"), "\(failure.description)")
        #expect(throws: SyncError.self) { _ = try context.table("todoitem").history(id: "a") }
        try await context.close()
    }

    @Test(arguments: [
        ("decision", "'coin-flip'"), ("decidedBy", "'a-committee'"), ("operation", "'upsert'"),
        ("recordedAt", "'yesterday'"),
    ])
    func aJournalEntryHoldingAnUnknownValueIsACorruptStoreNamingIt(_ column: String, _ value: String) async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO __journal (id, tableName, itemId, operation, decision, decidedBy, recordedAt, searchText)
                    VALUES ('entry-1', 'todoitem', 'a', 'update', 'use-server', 'person', '2026-11-27T10:00:00.000Z', 'a')
                    """)
            try db.execute(sql: "UPDATE __journal SET \(column) = \(value)")
        }

        let error = #expect(throws: SyncError.self) { _ = try context.journal.entries() }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__journal.\(column) holds \(value)"), "\(failure.description)")
        #expect(throws: SyncError.self) { _ = try context.journal.entry("entry-1") }
        try await context.close()
    }

    @Test(arguments: [("kind", "'teleported'"), ("recordedAt", "'yesterday'")])
    func aHistoryEventHoldingAnUnknownValueIsACorruptStoreNamingIt(_ column: String, _ value: String) async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE __history SET \(column) = \(value)") }

        let error = #expect(throws: SyncError.self) { _ = try context.table("todoitem").history(id: "a") }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__history.\(column) holds \(value)"), "\(failure.description)")
        try await context.close()
    }

    /// A push without its operation is not read as operation 0.
    @Test func aRecordedPushWithoutItsOperationIsNamedNotTakenForOperationZero() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO __exchanges (startedAt, milliseconds, method, target, purpose, tableName, itemId,
                        bytesSent, bytesReceived, requestHeaders, responseHeaders)
                    VALUES ('2026-11-27T10:00:00.000Z', 1, 'POST', '/tables/todoitem', 'push', 'todoitem', 'a',
                        0, 0, '', '')
                    """)
        }
        let error = #expect(throws: SyncError.self) { _ = try context.exchanges() }
        #expect(Self.corruption(error)?.description.contains("__exchanges.operationId holds NULL") == true)
        try await context.close()
    }

    /// A conflict policy a newer todosync saved is not taken for the default one.
    @Test func aConflictPolicyItDoesNotKnowIsACorruptStoreNamingIt() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in
            try db.execute(sql: "INSERT INTO __config (key, value) VALUES ('conflictPolicy|todoitem', 'crdt')")
        }

        let error = #expect(throws: SyncError.self) { _ = try context.conflicts.policy(for: "todoitem") }
        let failure = try #require(Self.corruption(error), "\(String(describing: error))")
        #expect(failure.description.contains("__config.conflictPolicy|todoitem holds 'crdt'"), "\(failure.description)")
        try await context.close()
    }

    /// A change of a kind it does not know is not pushed as an update.
    @Test func aQueuedChangeOfAnUnknownKindStopsThePushAndNothingIsSent() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: service.endpoint))
        try await context.table("todoitem").insert(["id": "a", "text": "queued"])
        try await context.store.pool.write { db in try db.execute(sql: "UPDATE __operations SET kind = 'upsert'") }

        let error = await #expect(throws: SyncError.self) { try await context.push() }
        #expect(Self.corruption(error) != nil, "\(String(describing: error))")
        #expect(try await service.rest.get("todoitem", "a") == nil, "nothing was sent")
        try await context.close()
        await service.stop()
    }
}
