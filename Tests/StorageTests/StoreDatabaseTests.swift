import Foundation
import GRDB
import Storage
import TestSupport
import Testing

@Suite struct StoreDatabaseTests {
    /// A store's path in a folder that does not exist yet (opening creates it).
    static func temporaryPath() throws -> String {
        try TemporaryFolder().file("store/test.sqlite")
    }

    @Test func migrationAppliedTwiceRunsOnce() throws {
        let path = try Self.temporaryPath()
        let runs = Counter()
        let migrations = [
            StoreMigration("create notes") { db in
                runs.increment()
                try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
            }
        ]
        let first = try StoreDatabase.open(at: path, migrations: migrations, durability: .everyCommit)
        try first.write { try $0.execute(sql: "INSERT INTO notes (body) VALUES ('kept')") }
        try first.close()
        let second = try StoreDatabase.open(at: path, migrations: migrations, durability: .everyCommit)
        #expect(runs.value == 1)
        #expect(try second.read { try String.fetchOne($0, sql: "SELECT body FROM notes") } == "kept")
    }

    @Test func laterMigrationsRunOnAnExistingFile() throws {
        let path = try Self.temporaryPath()
        let create = StoreMigration("create") { try $0.execute(sql: "CREATE TABLE t (a TEXT)") }
        try StoreDatabase.open(at: path, migrations: [create], durability: .everyCommit).close()
        let pool = try StoreDatabase.open(
            at: path,
            migrations: [create, StoreMigration("add b") { try $0.execute(sql: "ALTER TABLE t ADD COLUMN b TEXT") }],
            durability: .everyCommit)
        let columns = try pool.read { try $0.columns(in: "t").map(\.name) }
        #expect(columns == ["a", "b"])
    }

    @Test func storeIsInWALMode() throws {
        let pool = try StoreDatabase.open(at: Self.temporaryPath(), migrations: [], durability: .everyCommit)
        #expect(try pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test func theWriterSyncsEveryCommitOrLeavesItToAGroupCommit() throws {
        // PRAGMA synchronous: 2 is FULL (each commit syncs the WAL), 1 is NORMAL.
        for (durability, expected) in [(Durability.everyCommit, 2), (.groupCommit, 1)] {
            let pool = try StoreDatabase.open(at: Self.temporaryPath(), migrations: [], durability: durability)
            #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == expected)
        }
    }

    @Test func migrationsCommitWithoutASyncEachAndTheStoreSyncsEveryCommitAfter() throws {
        // Each migration syncing on its own cost a new client store some twenty syncs; one sync at
        // the end of the open makes them all durable.
        let during = SharedInt(-1)
        let migration = StoreMigration("t") { db in
            during.set(try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1)
            try db.execute(sql: "CREATE TABLE t (n INTEGER)")
        }
        let pool = try StoreDatabase.open(at: Self.temporaryPath(), migrations: [migration], durability: .everyCommit)
        #expect(during.value == 1)
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
    }

    @Test func bulkInserterWritesEveryRowAndHonoursConflictMode() throws {
        let pool = try StoreDatabase.open(
            at: Self.temporaryPath(),
            migrations: [
                StoreMigration("t") { try $0.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER)") }
            ],
            durability: .everyCommit)
        try pool.write { db in
            let insert = try BulkInserter(db, table: "t", columns: ["id", "n"], onConflict: .replace)
            for n in 0..<1000 { try insert.insert(["id-\(n % 500)", n]) }
        }
        #expect(try pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 500)
        #expect(try pool.read { try Int.fetchOne($0, sql: "SELECT n FROM t WHERE id = 'id-7'") } == 507)
        #expect(throws: (any Error).self) {
            try pool.write { db in try BulkInserter(db, table: "t", columns: ["id", "n"]).insert(["id-1", 1]) }
        }
    }

    @Test func unopenableFileIsATypedErrorNamingThePath() {
        #expect {
            _ = try StoreDatabase.open(at: "/proc/no-such-place/x.sqlite", migrations: [], durability: .everyCommit)
        } throws: { error in
            "\(error)".contains("/proc/no-such-place/x.sqlite")
        }
    }
}

/// Counts calls from migration closures (which must be Sendable).
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
