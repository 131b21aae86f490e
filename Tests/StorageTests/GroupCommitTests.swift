import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing

@testable import Storage

/// Group commit on a real WAL file: commits that wait while a sync runs share the next one, and a
/// disk that refuses to sync refuses every acknowledgement after it. The syncs are the real
/// `fdatasync`, wrapped where a test must hold one or make it fail.
@Suite struct GroupCommitTests {
    private static func database() throws -> (DatabasePool, path: String) {
        let path = try TemporaryFolder().file("tables.sqlite")
        let pool = try StoreDatabase.open(
            at: path, migrations: [StoreMigration("t") { try $0.execute(sql: "CREATE TABLE t (n INTEGER)") }],
            durability: .groupCommit)
        return (pool, path)
    }

    /// Inserts one row and takes its ticket.
    private static func commit(_ pool: DatabasePool, _ commits: GroupCommit, _ n: Int) throws -> GroupCommit.Ticket {
        try pool.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
                return .commit
            }
            return commits.committed()
        }
    }

    @Test func commitsThatWaitWhileASyncRunsShareTheNextOne() async throws {
        let (pool, path) = try Self.database()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = Atomic(true)
        let commits = GroupCommit(databasePath: path) { descriptor in
            // The first sync waits (on the syncing thread) until the test lets it go.
            if held.exchange(false, ordering: .relaxed) {
                entered.signal()
                release.wait()
            }
            return GroupCommit.fdatasync(descriptor)
        }
        let first = try Self.commit(pool, commits, 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await commits.waitUntilDurable(first) }
            await Self.wait(entered)
            // Ten commits while that sync runs, each waiting for its acknowledgement.
            for n in 1...10 {
                let ticket = try Self.commit(pool, commits, n)
                group.addTask { try await commits.waitUntilDurable(ticket) }
            }
            release.signal()
            try await group.waitForAll()
        }
        // One sync for the first commit, one for the ten that came during it.
        #expect(commits.syncCount == 2)
    }

    /// Waits for `semaphore` on a thread of its own (never on the cooperative pool).
    private static func wait(_ semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    @Test func aLoneCommitCostsOneSync() async throws {
        let (pool, path) = try Self.database()
        let commits = GroupCommit(databasePath: path)
        for n in 0..<3 { try await commits.waitUntilDurable(try Self.commit(pool, commits, n)) }
        #expect(commits.syncCount == 3)
        try commits.syncNow()
        #expect(commits.syncCount == 4)
    }

    @Test func aDiskThatRefusesToSyncRefusesThatAcknowledgementAndEveryLaterOne() async throws {
        let (pool, path) = try Self.database()
        let commits = GroupCommit(databasePath: path) { _ in EIO }
        let ticket = try Self.commit(pool, commits, 0)
        await #expect(throws: DurabilityError.syncFailed(path: path + "-wal", errno: EIO)) {
            try await commits.waitUntilDurable(ticket)
        }
        #expect(throws: DurabilityError.self) { try commits.checkHealthy() }
        let later = try Self.commit(pool, commits, 1)
        await #expect(throws: DurabilityError.self) { try await commits.waitUntilDurable(later) }
        #expect(throws: DurabilityError.self) { try commits.syncNow() }
        #expect("\(DurabilityError.syncFailed(path: "x", errno: EIO))".contains("Input/output error"))
    }
}

@Suite struct DurableFileTests {
    @Test func aSaveReplacesTheFileWholeAndLeavesNoTemporaryFile() throws {
        let folder = try TemporaryFolder().url
        let file = folder.appendingPathComponent("settings.json")
        try DurableFile.write(Data("old".utf8), to: file)
        try DurableFile.write(Data("new".utf8), to: file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["settings.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aFolderThatCannotBeWrittenIsATypedErrorNamingTheFile() {
        #expect(throws: DurabilityError.self) {
            try DurableFile.write(Data(), to: URL(fileURLWithPath: "/proc/no-such-place/settings.json"))
        }
    }
}
