import Foundation
import GRDB
import Storage
import SyncProtocol
import Synchronization

/// The tables in one SQLite file: dynamic schema, soft delete, versions and strictly increasing
/// `updatedAt` per table. Every check-then-write happens inside one write transaction, and SQLite
/// runs one write transaction at a time, so stamps are taken in commit order.
///
/// Dates are stored as integer milliseconds; each table has an index on `(updatedAt, id, deleted)`
/// so that the keyset cursor `(updatedAt gt T) or (updatedAt eq T and id gt 'I')` is a range scan.
///
/// A write returns once its commit is on disk: concurrent writes share one sync of the WAL
/// (``GroupCommit``), so a write that was answered survives a power cut.
final class SQLiteTableStore: TableStorage {
    let database: any DatabaseWriter
    /// Makes each write durable before it is answered (nil for an in-memory database).
    private let commits: GroupCommit?
    let registry = SchemaRegistry()
    let clock: @Sendable () -> Int64
    /// The latest `updatedAt` of each table written since the store opened, by table name, as
    /// committed: this process is the file's only writer, so a write need not read it back.
    let latestStamps = Mutex<[String: Int64]>([:])
    private let reads = Atomic<Int>(0)
    /// Whether the writer's connection has the backfill's SQL function: installing a function
    /// again expires every prepared statement of the connection, writers' included.
    let backfillFunctionInstalled = Mutex(false)
    let changes: ChangeFeed
    /// Sent at each commit of ``writeNow(_:)``, for the continuous backup to ship it promptly.
    let commitSignal = CommitSignal()
    /// The file's path (nil in memory).
    let path: String?
    /// The file's epoch, read (or begun) at open: only `todosync restore`, with the service
    /// stopped, begins another.
    let epoch: ServiceEpoch?

    static let migrations: [StoreMigration] = [
        StoreMigration("tableService.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE __tables (name TEXT NOT NULL PRIMARY KEY, createdAt INTEGER NOT NULL);
                    CREATE TABLE __columns (
                        tableName TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL, position INTEGER NOT NULL,
                        PRIMARY KEY (tableName, name));
                    """)
        },
        StoreMigration("tableService.v2.schemaChanges") { db in
            try db.execute(sql: SchemaChangeRecord.createTableSQL(dialect: .sqlite))
        },
        // The installation registry's table, which the fleet's `__devices` replaced (its rows move
        // there in the next migration).
        StoreMigration("tableService.v3.installations") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS "__installations" (
                        "id" TEXT NOT NULL PRIMARY KEY, "lastWrite" INTEGER NOT NULL, "oldNames" TEXT NOT NULL DEFAULT '{}')
                    """)
        },
        // The fleet's tables (``FleetTables``); a file on which an earlier version made them when its
        // fleet first started has them already, and its registry moved.
        StoreMigration("tableService.v4.fleet") { db in
            for sql in FleetTables.createSQL(dialect: .sqlite) { try db.execute(sql: sql) }
            let hasRegistry = try Int.fetchOne(db, sql: FleetTables.installationsTableSQL(dialect: .sqlite)) ?? 0 > 0
            guard hasRegistry else { return }
            let rows = try Row.fetchAll(db, sql: FleetTables.installationsSQL(dialect: .sqlite)).map(SQLRow.init)
            for statement in try FleetTables.moveInstallations(rows, dialect: .sqlite) {
                try db.execute(sql: statement.sql, arguments: arguments(statement.values))
            }
        },
    ]

    /// Opens the file at `path` (or a private in-memory database when `nil`), creates `tables` and
    /// `ownedTables` if they do not exist, and makes `ownedTables` keep an owner per row.
    init(
        path: String?, clock: @escaping @Sendable () -> Int64, tables: [String], ownedTables: [String] = [],
        declarations: [TableDeclaration] = [], changes: ChangeFeed = ChangeFeed(limit: 10_000),
        shipsWAL: Bool = false
    ) throws(TableServiceError) {
        self.changes = changes
        self.path = path
        do {
            if let path {
                // A shipped WAL is checkpointed by its shipper only, once it has shipped the frames.
                database = try StoreDatabase.open(
                    at: path, migrations: Self.migrations, durability: .groupCommit, automaticCheckpoints: !shipsWAL)
                commits = GroupCommit(databasePath: path)
            } else {
                database = try StoreDatabase.inMemory(migrations: Self.migrations)
                commits = nil
            }
        } catch {
            throw .cannotOpenDatabase(error.description)
        }
        self.clock = clock
        do {
            let database = self.database
            epoch = try database.write { db in try EpochTable.current(db, now: clock()) }
        } catch {
            throw .cannotOpenDatabase("\(error)")
        }
        do {
            // Renames and records first, in one transaction: a refused file changes nothing.
            try database.write { db in try self.applySchemaChanges(db, declarations) }
            try database.read { db in try registry.load(db) }
            try database.write { db in
                var created: Set<String> = []
                for table in tables + ownedTables where created.insert(table.lowercased()).inserted {
                    _ = try self.ensureTable(db, table)
                }
            }
            // Another transaction: the tables' schemas are published when the first one commits.
            try database.write { db in
                for table in ownedTables { try self.keepOwners(db, in: table) }
            }
            for declaration in declarations {
                try database.write { db in
                    var schema = try self.ensureTable(db, declaration.name)
                    try declaration.checkFits(schema)
                    try self.ensureColumns(db, &schema, for: declaration.typeWitnesses)
                }
            }
            try commits?.syncNow()
        } catch let error as ServiceSchemaError {
            throw .invalidConfiguration(error.description)
        } catch {
            throw .cannotOpenDatabase("\(error)")
        }
    }

    func ready() async throws(TableServiceError) {}

    /// Makes every commit so far durable (for a write made outside ``writeNow(_:)``).
    func syncNow() throws {
        try commits?.syncNow()
    }

    /// SQLite answers where it is called.
    var requestExecutor: (any TaskExecutor)? { nil }

    var dialect: SQLDialect { .sqlite }

    var diskSyncs: Int? { commits?.syncCount }

    var writesUnderWay: Int? { commits?.writesUnderWay }

    var databaseReads: Int? { reads.load(ordering: .relaxed) }

    func schema(of table: String) -> TableSchema? {
        registry.schema(of: table)
    }

    /// The cached schema: this process is the only writer of the file.
    func reloadSchema(of table: String) async throws(TableError) -> TableSchema? {
        registry.schema(of: table)
    }

    /// This process is the file's only writer.
    var isShared: Bool { false }

    func close() {}

    // MARK: Tables

    func allSchemas() async throws(TableError) -> [TableSchema] {
        registry.all()
    }

    func tableSummaries() async throws(TableError) -> [TableSummary] {
        let schemas = registry.all()
        return try await read { db in
            try schemas.map { schema in
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT count(*) AS \"total\", coalesce(sum(deleted), 0) AS \"deleted\" "
                        + "FROM \(SQLDialect.quoted(schema.name))")
                let total: Int = row?["total"] ?? 0
                let deleted: Int = row?["deleted"] ?? 0
                return TableSummary(schema: schema, live: total - deleted, deleted: deleted)
            }
        }
    }

    // MARK: Helpers

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(TableError) -> T {
        reads.add(1, ordering: .relaxed)
        do {
            return try await database.read(body)
        } catch {
            throw Self.tableError(error)
        }
    }

    /// Runs a one-row transaction on the calling thread, then returns once it is durable. Such a
    /// transaction takes tens of microseconds; handing it to GRDB's writer queue and back
    /// (`await database.write`) cost more CPU in thread switches than the transaction itself. It
    /// waits only for another such write (this process is the file's only writer). Then the request
    /// is suspended, its thread free for others, until the sync that makes it durable (shared with
    /// the writes committed meanwhile) has finished.
    func writeNow<T: Sendable>(_ body: (Database) throws -> T) async throws(TableError) -> T {
        let (result, ticket) = try commitNow(body)
        if let ticket, let commits {
            do { try await commits.waitUntilDurable(ticket) } catch { throw Self.tableError(error) }
        }
        return result
    }

    /// ``writeNow(_:)`` for a write that stamps a row, then tells the change feed (once the write is
    /// durable: a client woken by it must find the row).
    func writePublished(
        _ table: String, _ scope: RowScope, _ body: (Database) throws -> StoredItem
    ) async throws(TableError) -> StoredItem {
        let item = try await writeNow(body)
        changes.published(
            .init(table: table, cursor: ChangeCursor(updatedAt: item.updatedAt, id: item.id), owner: scope.owner))
        return item
    }

    /// The transaction of ``writeNow(_:)``, and its ticket for the sync that makes it durable.
    private func commitNow<T>(_ body: (Database) throws -> T) throws(TableError) -> (T, GroupCommit.Ticket?) {
        do {
            try commits?.checkHealthy()
        } catch {
            throw Self.tableError(error)
        }
        commits?.beginning()
        do {
            return try database.writeWithoutTransaction { db in
                let result = try db.inCachedTransaction { try body(db) }
                let ticket = commits?.committed()
                commitSignal.send()
                return (result, ticket)
            }
        } catch {
            commits?.abandoned()
            throw Self.tableError(error)
        }
    }

    /// Reads on the calling thread (``readNow(_:)``): the statements that share it are one-row
    /// reads or the small metadata tables.
    func query(_ statement: SQLStatement) async throws(TableError) -> [SQLRow] {
        try readNow { db in
            try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: Self.arguments(statement.values))
                .map(SQLRow.init)
        }
    }

    /// Writes through ``writeNow(_:)``, whose commit shares a sync with concurrent writes.
    func execute(_ statements: [SQLStatement]) async throws(TableError) {
        try await writeNow { db in
            for statement in statements {
                try db.cachedStatement(sql: statement.sql).execute(arguments: Self.arguments(statement.values))
            }
        }
    }

    /// Runs a one-row read on the calling thread, for the reason ``writeNow(_:)`` gives for its transaction; pages and
    /// summaries, which take longer, go through GRDB's reader threads (``read(_:)``).
    func readNow<T>(_ body: (Database) throws -> T) throws(TableError) -> T {
        reads.add(1, ordering: .relaxed)
        do {
            return try database.read(body)
        } catch {
            throw Self.tableError(error)
        }
    }
}
