import Foundation
import GRDB
import Storage
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import TableService

/// `serve --backup-dir` and `todosync restore` over real SQLite files and a real service over
/// HTTP: the service's clock is the test's, and every round is asked for (`shipNow`), so a time
/// restored to is a matter of the clock moved, not of seconds waited.
@Suite("Backup and restore")
struct BackupRestoreTests {
    static let start: Int64 = 1_800_000_000_000

    /// A folder for the backup and the restored files, which outlives the server's own.
    struct Work {
        let folder: TemporaryFolder
        var backup: String { folder.file("backup") }
        init() throws { folder = try TemporaryFolder() }
    }

    static func withBackedUpServer(
        _ work: Work, keep: Duration = .seconds(7 * 86_400), restartLogAfterBytes: Int = 4 << 20,
        _ body: (TestServer, ContinuousBackup) async throws -> Void
    ) async throws {
        try await withTestServer(
            tables: ["todoitem"], controlledClock: true,
            configure: {
                var settings = BackupSettings(folder: work.backup, keep: keep)
                settings.restartLogAfterBytes = restartLogAfterBytes
                $0.backup = settings
            }
        ) { server in
            server.clock.now = start
            let backup = try #require(server.running.service.backup)
            try await body(server, backup)
        }
    }

    static func insert(_ server: TestServer, _ ids: [String]) async throws {
        for id in ids {
            let reply = try await server.send(.post, "/tables/todoitem", json: ["id": id, "text": "text of \(id)"])
            #expect(reply.status == 201)
        }
    }

    /// Every row of the service: id → version (deleted ones included).
    static func rows(_ server: TestServer) async throws -> [String: String] {
        let reply = try await server.send(.get, "/tables/todoitem?__includeDeleted=true&$top=1000")
        var rows: [String: String] = [:]
        for row in reply.array ?? [] { rows[row["id"] as? String ?? ""] = row["version"] as? String }
        return rows
    }

    /// Every row of a restored file: id → version.
    static func rows(inFile path: String) throws -> [String: String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: #"SELECT "id", "version" FROM "todoitem""#).map {
                    ($0[0] as String, $0[1] as String)
                })
        }
    }

    /// The `__epoch` row of a restored file: id, restoredTo, beganAt.
    struct EpochRow {
        let id: String
        let restoredTo: Int64?
        let beganAt: Int64
    }

    static func epoch(inFile path: String) throws -> EpochRow? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchOne(db, sql: #"SELECT "id", "restoredTo", "beganAt" FROM "__epoch""#).map {
                EpochRow(id: $0[0], restoredTo: $0[1], beganAt: $0[2])
            }
        }
    }

    static func ids(_ prefix: String, _ count: Int) -> [String] { (0..<count).map { "\(prefix)-\($0)" } }

    /// The shared story: 20 rows, time T, then 10 new rows, 5 changed, 3 deleted (soft deletes: the
    /// rows stay, with a new version).
    struct Story {
        var atT: [String: String] = [:]
        var latest: [String: String] = [:]
        var t: Int64 = 0
        var now: Int64 = 0
    }

    static func tellStory(_ server: TestServer, _ backup: ContinuousBackup) async throws -> Story {
        var story = Story()
        try await insert(server, ids("before", 20))
        server.clock.now = start + 10_000
        try await backup.shipNow()
        story.atT = try await rows(server)
        story.t = start + 10_000
        server.clock.now = start + 20_000
        try await insert(server, ids("after", 10))
        for id in ids("before", 5) {
            #expect(try await server.send(.patch, "/tables/todoitem/\(id)", json: ["text": "changed"]).status == 200)
        }
        for id in ids("before", 8).suffix(3) {
            #expect(try await server.send(.delete, "/tables/todoitem/\(id)").status == 200)
        }
        try await backup.shipNow()
        story.latest = try await rows(server)
        story.now = start + 30_000
        server.clock.now = story.now
        return story
    }

    @Test func restoreToATimeGivesExactlyTheRowsOfThatTimeAndLatestGivesEveryAcknowledgedRow() async throws {
        let work = try Work()
        var story = Story()
        try await Self.withBackedUpServer(work) { server, backup in
            story = try await Self.tellStory(server, backup)
        }
        let past = work.folder.file("past.sqlite")
        let outcome = try ServiceRestore.restore(
            backupFolder: work.backup, database: past, to: .at(story.t), now: story.now)
        #expect(try Self.rows(inFile: past) == story.atT)
        #expect(story.atT.count == 20)
        #expect(outcome.keptAs == nil)
        let epoch = try #require(try Self.epoch(inFile: past))
        #expect(epoch.restoredTo == story.t)
        #expect(epoch.beganAt == story.now)
        #expect(epoch.id.count == 32 && epoch.id.allSatisfy { $0.isHexDigit && !$0.isUppercase })

        let newest = work.folder.file("newest.sqlite")
        let latest = try ServiceRestore.restore(
            backupFolder: work.backup, database: newest, to: .latest, now: story.now)
        #expect(try Self.rows(inFile: newest) == story.latest)
        #expect(story.latest.count == 30)
        #expect(latest.restoredTo == Self.start + 20_000)
        #expect(try Self.epoch(inFile: newest)?.restoredTo == Self.start + 20_000)
    }

    @Test func thePlanCountsWhatTheRestoreChangesAndChangesNothing() async throws {
        let work = try Work()
        var story = Story()
        try await Self.withBackedUpServer(work) { server, backup in
            story = try await Self.tellStory(server, backup)
        }
        let target = work.folder.file("not-there.sqlite")
        let plan = try ServiceRestore.plan(
            backupFolder: work.backup, database: target, to: .at(story.t), now: story.now)
        #expect(plan.tables == [.init(table: "todoitem", vanish: 10, older: 8, comeBack: 0)])
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(plan.description.contains("rows that vanish"))
        #expect(plan.description.contains("Nothing was changed"))
        // Restoring then gives what the plan said.
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .at(story.t), now: story.now)
        let restored = try Self.rows(inFile: target)
        #expect(story.latest.keys.filter { restored[$0] == nil }.count == 10)
        #expect(story.latest.filter { restored[$0.key] != nil && restored[$0.key] != $0.value }.count == 8)
        #expect(restored.keys.filter { story.latest[$0] == nil }.count == 0)
    }

    @Test func thePlanNamesTheDevicesThatSyncedPastTheTime() async throws {
        let work = try Work()
        var t: Int64 = 0
        try await Self.withBackedUpServer(work) { server, backup in
            try await Self.insert(server, ["a"])
            server.clock.now = Self.start + 10_000
            try await backup.shipNow()
            t = Self.start + 10_000
            server.clock.now = Self.start + 20_000
            let reply = try await server.send(
                .post, "/tables/todoitem", json: ["id": "b"],
                headers: [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.installationID: "phone-of-ann"])
            #expect(reply.status == 201)
            await server.running.service.saveInstallations()
            try await backup.shipNow()
        }
        let plan = try ServiceRestore.plan(
            backupFolder: work.backup, database: work.folder.file("x.sqlite"), to: .at(t), now: Self.start + 30_000)
        #expect(plan.devices.map(\.id) == ["phone-of-ann"])
        #expect(plan.description.contains("phone-of-ann"))
    }

    @Test func aTimeBeforeTheOldestBaseCopyOrInTheFutureIsRefusedAndTheTargetUntouched() async throws {
        let work = try Work()
        var story = Story()
        try await Self.withBackedUpServer(work) { server, backup in
            story = try await Self.tellStory(server, backup)
        }
        let target = work.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .latest, now: story.now)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        #expect {
            try ServiceRestore.restore(
                backupFolder: work.backup, database: target, to: .at(Self.start - 1), now: story.now)
        } throws: { error in
            guard case RestoreError.beforeOldest = error else { return false }
            return "\(error)".contains("--to") && "\(error)".contains("oldest base copy")
        }
        #expect {
            try ServiceRestore.restore(
                backupFolder: work.backup, database: target, to: .at(story.now + 60_000), now: story.now)
        } throws: { error in
            guard case RestoreError.inFuture = error else { return false }
            return "\(error)".contains("--to") && "\(error)".contains("future")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
    }

    @Test func theBackupFolderOfAnotherDatabaseIsRefusedByRestoreAndByServe() async throws {
        let first = try Work()
        let second = try Work()
        try await Self.withBackedUpServer(first) { server, backup in
            try await Self.insert(server, ["one"])
            try await backup.shipNow()
        }
        try await Self.withBackedUpServer(second) { server, backup in
            try await Self.insert(server, ["two"])
            try await backup.shipNow()
        }
        let target = first.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(
            backupFolder: first.backup, database: target, to: .latest, now: Self.start + 1000)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        #expect {
            try ServiceRestore.restore(
                backupFolder: second.backup, database: target, to: .latest, now: Self.start + 1000)
        } throws: { error in
            guard case RestoreError.otherDatabase = error else { return false }
            return "\(error)".contains("--backup-dir")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
        // Not a backup folder at all.
        let empty = first.folder.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect {
            try ServiceRestore.restore(backupFolder: empty, database: target, to: .latest, now: Self.start + 1000)
        } throws: { error in "\(error)".contains("not a backup folder") }

        // The restored file is a new database for backups: serving it with the old folder is refused.
        var configuration = TableService.Configuration(database: .sqlite(path: target), tables: ["todoitem"])
        configuration.backup = BackupSettings(folder: first.backup)
        #expect {
            _ = try TableService(configuration: configuration)
        } throws: { error in
            "\(error)".contains("another database") && "\(error)".contains("serve it with a new --backup-dir")
        }
        // With a new folder it is backed up.
        configuration.backup = BackupSettings(folder: first.folder.file("new-backup"))
        let service = try TableService(configuration: configuration)
        try await #require(service.backup).shipNow()
        service.close()
    }

    @Test func aDamagedSegmentIsReportedAndTheTargetUntouched() async throws {
        let work = try Work()
        var story = Story()
        try await Self.withBackedUpServer(work) { server, backup in
            story = try await Self.tellStory(server, backup)
        }
        let generation = try #require(try BackupFolder(path: work.backup).generations().first)
        let segment = try #require(try generation.segments().last)
        let target = work.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .at(story.t), now: story.now)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment.path))
        let original = bytes
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: segment.path))
        #expect {
            try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .latest, now: story.now)
        } throws: { error in
            guard case RestoreError.backup(.corrupt(let path, _)) = error else { return false }
            return path == segment.path && "\(error)".contains("checksum")
        }
        try original.prefix(original.count - 100).write(to: URL(fileURLWithPath: segment.path))
        #expect {
            try ServiceRestore.plan(backupFolder: work.backup, database: target, to: .latest, now: story.now)
        } throws: { error in
            guard case RestoreError.backup(.corrupt) = error else { return false }
            return "\(error)".contains("cut short")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
        // A time before the damaged segment still restores.
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .at(story.t), now: story.now)
        #expect(try Self.rows(inFile: target) == story.atT)
    }

    @Test func restoreKeepsTheFileThatWasThereAndRefusesWhileAServiceHoldsIt() async throws {
        let work = try Work()
        var story = Story()
        try await Self.withBackedUpServer(work) { server, backup in
            story = try await Self.tellStory(server, backup)
        }
        let target = work.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .latest, now: story.now)
        do {
            let lock = try ServiceFileLock(databasePath: target)
            #expect {
                try ServiceRestore.restore(
                    backupFolder: work.backup, database: target, to: .at(story.t), now: story.now)
            } throws: { error in
                guard case RestoreError.serviceRunning = error else { return false }
                return "\(error)".contains("A service is running on")
            }
            withExtendedLifetime(lock) {}
        }
        let outcome = try ServiceRestore.restore(
            backupFolder: work.backup, database: target, to: .at(story.t), now: story.now + 1)
        let kept = try #require(outcome.keptAs)
        #expect(try Self.rows(inFile: kept) == story.latest)
        #expect(try Self.rows(inFile: target) == story.atT)
    }

    @Test func commitsRacingRoundsAndLogRestartsLoseNothing() async throws {
        let work = try Work()
        let acknowledged = AcknowledgedIDs()
        var shipped: [String] = []
        // A tiny restart threshold: every round holds the writer and lets the log start afresh.
        try await Self.withBackedUpServer(work, restartLogAfterBytes: 1) { server, backup in
            let walPath = server.folder.file("tables.sqlite-wal")
            var salts: Set<String> = []
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for index in 0..<40 {
                            let id = "w\(writer)-\(index)"
                            let reply = try await server.send(.post, "/tables/todoitem", json: ["id": id])
                            if reply.status == 201 { acknowledged.add(id) }
                        }
                    }
                }
                for _ in 0..<30 {
                    try await backup.shipNow()
                    if let header = try WALReader.header(path: walPath) { salts.insert(header.salts.description) }
                    await Task.yield()
                }
                try await group.waitForAll()
            }
            try await backup.shipNow()
            shipped = acknowledged.all
            // Rounds with nothing committed between them let the next write restart the log.
            try await Self.insert(server, ["quiet-1"])
            try await backup.shipNow()
            try await Self.insert(server, ["quiet-2"])
            try await backup.shipNow()
            if let header = try WALReader.header(path: walPath) { salts.insert(header.salts.description) }
            #expect(salts.count > 1, "the log never restarted")
            #expect(backup.status.generations.count == 1, "continuity was lost: \(backup.status.generations)")
        }
        let target = work.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .latest, now: .max / 2)
        let restored = try Self.rows(inFile: target)
        #expect(shipped.count == 160)
        #expect(shipped.filter { restored[$0] == nil } == [])
        #expect(restored["quiet-1"] != nil && restored["quiet-2"] != nil)
    }

    @Test func eachStartBeginsAGenerationAndOldOnesGoPastTheKeep() async throws {
        let work = try Work()
        let folder = try TemporaryFolder()
        let path = folder.file("tables.sqlite")
        func serve(at time: Int64, _ ids: [String]) async throws {
            var configuration = TableService.Configuration(database: .sqlite(path: path), tables: ["todoitem"])
            configuration.backup = BackupSettings(folder: work.backup, keep: .seconds(3600))
            configuration.clock = { time }
            let running = try TableService.start(configuration)
            let server = TableClient(base: running.url)
            for id in ids { try await server.insert(["id": .string(id)]) }
            let backup = try #require(running.service.backup)
            try await backup.shipNow()
            await running.stop()
            try await backup.shipNow()
        }
        try await serve(at: Self.start, ["first"])
        try await serve(at: Self.start + 600_000, ["second"])
        #expect(try BackupFolder(path: work.backup).generations().count == 2)
        let early = work.folder.file("early.sqlite")
        _ = try ServiceRestore.restore(
            backupFolder: work.backup, database: early, to: .at(Self.start + 1000), now: Self.start + 700_000)
        #expect(try Self.rows(inFile: early).keys.sorted() == ["first"])
        // An hour after the second generation began, the first is no longer needed.
        #expect(try BackupFolder(path: work.backup).prune(keep: 3_600_000, now: Self.start + 3_000_000) == [])
        let removed = try BackupFolder(path: work.backup).prune(keep: 3_600_000, now: Self.start + 4_300_000)
        #expect(removed.count == 1)
        let late = work.folder.file("late.sqlite")
        _ = try ServiceRestore.restore(
            backupFolder: work.backup, database: late, to: .latest, now: Self.start + 4_300_000)
        #expect(try Self.rows(inFile: late).keys.sorted() == ["first", "second"])
    }

    @Test func theRunningBackupShipsEachCommitWithoutBeingAsked() async throws {
        let work = try Work()
        try await Self.withBackedUpServer(work) { server, backup in
            let shipping = Task { await backup.run() }
            defer { shipping.cancel() }
            try await Self.insert(server, Self.ids("live", 5))
            // Waits for the rows to be in the backup (no fixed wait: a loaded machine takes longer).
            let target = work.folder.file("live.sqlite")
            var restored: [String: String] = [:]
            try await eventually("a restore of the five rows", within: 120, every: .milliseconds(20)) {
                // Refused until the base copy is made.
                guard
                    (try? ServiceRestore.restore(
                        backupFolder: work.backup, database: target, to: .latest, now: Self.start + 60_000)) != nil
                else { return false }
                restored = try Self.rows(inFile: target)
                return restored.count == 5
            }
            #expect(restored.keys.sorted() == Self.ids("live", 5).sorted())
        }
    }

    @Test func aRoundThatFailsIsReportedAndTheNextBeginsANewGeneration() async throws {
        let work = try Work()
        try await Self.withBackedUpServer(work) { server, backup in
            try await Self.insert(server, ["before"])
            try await backup.shipNow()
            // The backup disk goes away (unmounted, say): the round fails and says why.
            let away = work.folder.file("away")
            try FileManager.default.moveItem(atPath: work.backup, toPath: away)
            try await Self.insert(server, ["while-away"])
            await #expect(throws: BackupError.self) { try await backup.shipNow() }
            #expect(backup.status.lastError != nil)
            try FileManager.default.moveItem(atPath: away, toPath: work.backup)
            try await Self.insert(server, ["after"])
            let round = try await backup.shipNow()
            #expect(round.newGeneration != nil)
            #expect(backup.status.lastError == nil)
        }
        let target = work.folder.file("target.sqlite")
        _ = try ServiceRestore.restore(backupFolder: work.backup, database: target, to: .latest, now: .max / 2)
        #expect(try Self.rows(inFile: target).keys.sorted() == ["after", "before", "while-away"])
    }

    @Test func aPostgreSQLServiceRefusesTheBackupFolderAndPointsToItsOwnTools() throws {
        var configuration = TableService.Configuration(
            database: .postgres(PostgresLocation(host: "127.0.0.1", user: "todosync", database: "todosync")))
        configuration.backup = BackupSettings(folder: "/tmp/never-written")
        #expect {
            _ = try TableService(configuration: configuration)
        } throws: { error in
            "\(error)".contains("--backup-dir") && "\(error)".contains("pg_basebackup")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-written"))
    }
}

/// The ids whose inserts the service acknowledged, added from racing tasks.
final class AcknowledgedIDs: Sendable {
    private let ids = Mutex<[String]>([])
    func add(_ id: String) { ids.withLock { $0.append(id) } }
    var all: [String] { ids.withLock { $0 } }
}
