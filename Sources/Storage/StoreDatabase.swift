import Foundation
import GRDB

/// One named step of a schema; applied once per database file, in the order listed.
public struct StoreMigration: Sendable {
    public let name: String
    public let migrate: @Sendable (Database) throws -> Void

    public init(_ name: String, _ migrate: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.migrate = migrate
    }
}

/// When a committed transaction is on disk, so that it survives a power cut.
public enum Durability: Sendable {
    /// Every commit syncs the WAL before it returns (`synchronous = FULL`): for a store whose commits
    /// come one at a time (the sync client's), where each commit is something a person was told.
    case everyCommit
    /// Commits do not sync (`synchronous = NORMAL`, safe from a killed process); the writer makes
    /// them durable before acknowledging them, through a ``GroupCommit`` that shares one sync among
    /// concurrent commits (the table service's).
    case groupCommit
}

/// Opens SQLite files the way every part of todosync wants them: WAL, a busy timeout,
/// foreign keys on, and the given migrations applied.
public enum StoreDatabase {
    /// Opens (creating if needed) the file at `path` as a WAL `DatabasePool` and migrates it. The
    /// file, its migrations and its name in the folder are on disk when this returns. A new file is
    /// created readable by its owner only (0600; SQLite gives its WAL the same mode), a new folder 0700.
    /// With `automaticCheckpoints` false, SQLite never checkpoints the WAL on its own
    /// (`wal_autocheckpoint = 0`): a ``WALShipper`` does, once it has shipped the frames.
    public static func open(
        at path: String, migrations: [StoreMigration], durability: Durability, automaticCheckpoints: Bool = true
    ) throws(StorageError) -> DatabasePool {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotOpen(path: path, reason: "its folder cannot be created (\(error.localizedDescription))")
        }
        let created = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        let pool: DatabasePool
        do {
            var configuration = configuration()
            if !automaticCheckpoints {
                configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            }
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
        // GRDB sets the writer to `synchronous = NORMAL` once it is in WAL mode: the migrations
        // commit without syncing, and one sync below makes them all durable (a new client store
        // has some twenty, each a sync of its own under `FULL`).
        try migrate(pool, path: path, migrations: migrations)
        do {
            // A new file's name, and the migrations, are not on disk yet.
            let commits = GroupCommit(databasePath: path)
            try commits.syncNow()
            try commits.syncFolder()
            // Only the writer commits, so only its setting matters.
            if durability == .everyCommit {
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            }
        } catch let error as DurabilityError {
            throw .cannotOpen(path: path, reason: error.description)
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
        return pool
    }

    /// An in-memory database with the migrations applied (for tools and tests that keep nothing).
    public static func inMemory(migrations: [StoreMigration]) throws(StorageError) -> DatabaseQueue {
        let queue: DatabaseQueue
        do { queue = try DatabaseQueue(configuration: configuration()) } catch {
            throw .cannotOpen(path: ":memory:", reason: "\(error)")
        }
        try migrate(queue, path: ":memory:", migrations: migrations)
        return queue
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        return configuration
    }

    private static func migrate(
        _ writer: some DatabaseWriter, path: String, migrations: [StoreMigration]
    )
        throws(StorageError)
    {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.name, migrate: migration.migrate)
        }
        do {
            try migrator.migrate(writer)
        } catch {
            throw .migrationFailed(path: path, reason: "\(error)")
        }
    }
}

/// Why a store could not be opened or prepared.
public enum StorageError: Error, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case migrationFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "Cannot open the database \(path): \(reason). Check the path and its permissions."
        case .migrationFailed(let path, let reason):
            "Cannot prepare the database \(path): \(reason). The file may belong to another program or a newer todosync."
        }
    }
}
