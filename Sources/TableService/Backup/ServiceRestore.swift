import Foundation
import GRDB
import Storage
import SyncProtocol

/// `todosync restore`: a SQLite service's database rebuilt from its backup folder as of a time,
/// and what that would change.
public enum ServiceRestore {
    /// What a restore did.
    public struct Outcome: Sendable {
        /// The newest commit the restored database holds (the epoch's `restoredTo`).
        public let restoredTo: Int64
        public let epoch: ServiceEpoch
        /// Where the file that was there before is kept, when there was one.
        public let keptAs: String?
        public let segments: Int
    }

    /// What restoring `database` from `backupFolder` to `time` would change, read without changing
    /// anything (`database` need not exist).
    public static func plan(
        backupFolder: String, database: String, to time: RestoreTime, now: Int64
    ) throws(RestoreError) -> RestorePlan {
        let catalog = try catalog(backupFolder, time: time, now: now)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "todosync-restore-plan-\(EpochTable.newID())"
        ).path
        do { try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true) } catch {
            throw .database(path: scratch, reason: "\(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let pastPath = scratch + "/past.sqlite"
        let newestPath = scratch + "/newest.sqlite"
        let past: RestoreBuilder.Built
        do {
            past = try RestoreBuilder.build(catalog, at: time.milliseconds, into: pastPath)
            _ = try RestoreBuilder.build(catalog, at: nil, into: newestPath)
        } catch {
            throw .backup(error)
        }
        do {
            let newest = try DatabaseQueue(path: newestPath)
            defer { try? newest.close() }
            return try newest.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS past", arguments: [pastPath])
                let tables = try userTables(db, schema: "main").union(userTables(db, schema: "past")).sorted()
                let pastTables = try userTables(db, schema: "past")
                let newestTables = try userTables(db, schema: "main")
                let changes = try tables.map { table in
                    try change(
                        of: table, in: db, past: pastTables.contains(table), newest: newestTables.contains(table))
                }
                return RestorePlan(
                    database: database, backupFolder: backupFolder, asked: time.milliseconds,
                    restoredTo: past.committedAt, newest: catalog.newest, tables: changes,
                    devices: try devices(db, after: time.milliseconds ?? past.committedAt))
            }
        } catch let error as RestoreError {
            throw error
        } catch {
            throw .database(path: newestPath, reason: "\(error)")
        }
    }

    /// Replaces `database` with its state at `time`, built from `backupFolder`: all or nothing,
    /// also across a power cut. The file built is checked (`integrity_check`), begins a new epoch
    /// (`EpochTable`: the `__epoch` row) and a new identity for backups, and is synced; the file that was
    /// there (checkpointed first) is kept as `DATABASE.before-restore-STAMP`, and the new one renamed
    /// into place. Refused while a service runs on `database` (its ``ServiceFileLock``).
    public static func restore(
        backupFolder: String, database: String, to time: RestoreTime, now: Int64
    ) throws(RestoreError) -> Outcome {
        let catalog = try catalog(backupFolder, time: time, now: now)
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent().path
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw .database(path: database, reason: "its folder cannot be created (\(error.localizedDescription))")
        }
        let lock: ServiceFileLock
        do { lock = try ServiceFileLock(databasePath: database) } catch { throw .serviceRunning(error) }
        // Held until the new file is in place: a service starting meanwhile is refused.
        defer { withExtendedLifetime(lock) {} }
        do {
            let exists = FileManager.default.fileExists(atPath: database)
            if exists { try checkBelongs(database, to: catalog) }
            let building = database + ".restoring"
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(building + suffix) }
            let built: RestoreBuilder.Built
            do { built = try RestoreBuilder.build(catalog, at: time.milliseconds, into: building) } catch {
                unlink(building)
                throw .backup(error)
            }
            let restoredTo: Int64 = time.milliseconds ?? built.committedAt
            let epoch: ServiceEpoch
            do {
                epoch = try finish(building, restoredTo: restoredTo, from: catalog.database, now: now)
            } catch {
                for suffix in ["", "-wal", "-shm"] { unlink(building + suffix) }
                throw error
            }
            var keptAs: String?
            if exists {
                keptAs = try keep(database, stamp: now)
            }
            for suffix in ["-wal", "-shm", "-journal"] { unlink(database + suffix) }
            guard rename(building, database) == 0 else {
                throw .database(path: database, reason: String(cString: strerror(errno)))
            }
            do { try DurableWrite.syncFolder(of: database) } catch { throw .backup(error) }
            return Outcome(restoredTo: restoredTo, epoch: epoch, keptAs: keptAs, segments: built.segments)
        }
    }

    /// The folder's catalog, with `time` checked against it and the clock.
    private static func catalog(_ folder: String, time: RestoreTime, now: Int64) throws(RestoreError) -> BackupCatalog {
        let catalog: BackupCatalog
        do { catalog = try BackupCatalog(folder: BackupFolder(path: folder)) } catch { throw .backup(error) }
        if case .at(let asked) = time {
            guard asked <= now else { throw .inFuture(asked: asked, now: now) }
            guard asked >= catalog.oldest else { throw .beforeOldest(asked: asked, oldest: catalog.oldest) }
        }
        return catalog
    }

    /// Refuses a database that was neither backed up to `catalog`'s folder nor restored from it.
    private static func checkBelongs(_ database: String, to catalog: BackupCatalog) throws(RestoreError) {
        let identity: (id: String, restoredFrom: String?)?
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: database, configuration: configuration)
            defer { try? queue.close() }
            identity = try queue.read { db in try BackupIdentity.current(in: db) }
        } catch {
            throw .database(path: database, reason: "\(error)")
        }
        guard let identity else { return }
        guard identity.id == catalog.database || identity.restoredFrom == catalog.database else {
            throw .otherDatabase(database: database, folder: catalog.folder.path)
        }
    }

    /// Checks the file built, begins its epoch and identity, and leaves it whole in one durable file.
    private static func finish(
        _ path: String, restoredTo: Int64, from backup: String, now: Int64
    ) throws(RestoreError) -> ServiceEpoch {
        do {
            let queue = try DatabaseQueue(path: path)
            let report = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            guard report == ["ok"] else {
                try? queue.close()
                throw RestoreError.integrity(report.prefix(5).joined(separator: "; "))
            }
            let epoch = try queue.write { db in
                try BackupIdentity.renew(restoredFrom: backup, in: db)
                return try EpochTable.begin(db, restoredTo: restoredTo, now: now)
            }
            // Everything into the file itself (the WAL is then empty, and goes when the queue closes).
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
            for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw RestoreError.database(path: path, reason: String(cString: strerror(errno)))
            }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else {
                throw RestoreError.database(path: path, reason: String(cString: strerror(errno)))
            }
            return epoch
        } catch let error as RestoreError {
            throw error
        } catch {
            throw .database(path: path, reason: "\(error)")
        }
    }

    /// Checkpoints the file that is there (no service runs on it) and keeps it as
    /// `DATABASE.before-restore-STAMP`, a second name of the same file (or a copy): the file stays
    /// in place until the new one is renamed over it.
    private static func keep(_ database: String, stamp now: Int64) throws(RestoreError) -> String {
        do {
            let queue = try DatabaseQueue(path: database)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
        } catch {
            throw .database(path: database, reason: "cannot checkpoint it before keeping it: \(error)")
        }
        let stamp = RestoreTime.text(now).replacingOccurrences(of: ":", with: "")
        var kept = database + ".before-restore-" + stamp
        var attempt = 1
        while FileManager.default.fileExists(atPath: kept) {
            attempt += 1
            kept = database + ".before-restore-" + stamp + "-\(attempt)"
        }
        do {
            // A second name is free; a filesystem without hard links gets a copy.
            if link(database, kept) == 0 {
                try DurableWrite.syncFolder(of: database)
            } else {
                try DurableWrite.copy(from: database, to: kept)
            }
        } catch {
            throw .database(path: kept, reason: "cannot keep the current file: \(error.description)")
        }
        return kept
    }

    /// The tables of the service in `schema`: neither its own (`__…`) nor SQLite's or GRDB's.
    private static func userTables(_ db: Database, schema: String) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db,
                sql: "SELECT name FROM \(schema).sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_\\_%' "
                    + "ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'grdb\\_%' ESCAPE '\\'")
        )
    }

    private static func change(
        of table: String, in db: Database, past: Bool, newest: Bool
    ) throws -> RestorePlan.TableChange {
        let quoted = SQLDialect.quoted(table)
        func count(_ sql: String) throws -> Int { try Int.fetchOne(db, sql: sql) ?? 0 }
        guard past else {
            return .init(table: table, vanish: try count("SELECT count(*) FROM main.\(quoted)"), older: 0, comeBack: 0)
        }
        guard newest else {
            return .init(table: table, vanish: 0, older: 0, comeBack: try count("SELECT count(*) FROM past.\(quoted)"))
        }
        return .init(
            table: table,
            vanish: try count(
                "SELECT count(*) FROM main.\(quoted) AS n WHERE NOT EXISTS "
                    + "(SELECT 1 FROM past.\(quoted) AS o WHERE o.\"id\" = n.\"id\")"),
            older: try count(
                "SELECT count(*) FROM main.\(quoted) AS n JOIN past.\(quoted) AS o ON o.\"id\" = n.\"id\" "
                    + "WHERE o.\"version\" IS NOT n.\"version\""),
            comeBack: try count(
                "SELECT count(*) FROM past.\(quoted) AS o WHERE NOT EXISTS "
                    + "(SELECT 1 FROM main.\(quoted) AS n WHERE n.\"id\" = o.\"id\")"))
    }

    /// The fleet's devices (`__devices` of the newest state) in contact after `time`, latest first.
    private static func devices(_ db: Database, after time: Int64) throws -> [RestorePlan.Device] {
        guard try db.tableExists("__devices") else { return [] }
        return try Row.fetchAll(
            db,
            sql: #"SELECT "id", "lastContact", "record" FROM main."__devices" WHERE "lastContact" > ? "#
                + #"ORDER BY "lastContact" DESC, "id""#, arguments: [time]
        ).map { row in
            let record: String = row["record"]
            let object = try? JSONSerialization.jsonObject(with: Data(record.utf8)) as? [String: Any]
            return RestorePlan.Device(id: row["id"], user: object?["user"] as? String, lastContact: row["lastContact"])
        }
    }
}

extension RestoreTime {
    /// The time in ms, nil for ``latest``.
    var milliseconds: Int64? {
        if case .at(let time) = self { return time }
        return nil
    }
}
