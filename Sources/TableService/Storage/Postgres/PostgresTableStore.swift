import Background
import Foundation
import Logging
import PostgresNIO
import SyncProtocol
import Synchronization

/// The tables in a PostgreSQL database that any number of service instances share.
///
/// Each write is one statement, so the database makes it atomic whichever instance sends it:
/// - it takes its stamp (`updatedAt`) from the database's clock after registering itself, and
///   writers of a table never wait for one another; pulls answer only the rows below the horizon,
///   which no later commit can fall behind (``PostgresHorizon``, and `IncrementalPull.md` beside
///   `Storage/`);
/// - a version check is part of the `UPDATE`'s condition, which PostgreSQL evaluates again on the
///   newest row version after waiting for a concurrent writer: of several writers expecting the
///   same version exactly one changes the row.
///
/// Writes and item reads run as prepared statements (``PreparedStatements``); pages by `$skip`
/// start after the row the previous page ended at when that is known to be exact (``PageCursors``).
///
/// Schema changes (a new table, a new column, the first type of an all-null column) are
/// serialised across instances by an advisory lock and made under an exclusive lock of the table,
/// after reading the schema again; every instance learns them from the database when a request
/// names a column it does not know, and reads rows by the column names PostgreSQL sends.
final class PostgresTableStore: TableStorage {
    let location: PostgresLocation
    /// The connections requests run on.
    let pool: PostgresConnectionPool
    /// Carries commits between the instances (``PostgresChangeBus``); it runs as ``listener``'s job.
    let bus: PostgresChangeBus
    private let listener = BackgroundWork()
    /// Reads the horizon of positional reads (``PostgresHorizon``).
    let horizonReader = HorizonReader()
    private let opening = Mutex<Task<Void, any Error>?>(nil)
    private let isOpen = Atomic<Bool>(false)
    let registry = SchemaRegistry()
    /// Tables this process knows to have the hidden ``BackfillMarker/column``.
    let markedTables = Mutex<Set<String>>([])
    /// The names of the statements this instance has prepared.
    let prepared = PreparedStatements()
    /// Where this instance's pages in `updatedAt` or `createdAt` order ended.
    let cursors = PageCursors()
    let clock: @Sendable () -> Int64
    /// The clock stamps come from when the service was given one (tests); nil: the database's.
    let givenClock: GivenClock?
    let logger: Logger
    /// The event loop of every connection of ``pool``, as the executor that requests' statements
    /// run on (see ``onEventLoop(_:)``).
    let executor: EventLoopTaskExecutor
    let changes: ChangeFeed
    /// The database's epoch, read when the store opens (``prepareEpoch(_:)``).
    let currentEpoch = Mutex<ServiceEpoch?>(nil)

    /// The key of the advisory lock that serialises schema changes of all instances.
    static let schemaLockKey: Int64 = 0x746F_646F_7379_6E63  // "todosync"
    /// PostgreSQL's longest identifier, in bytes (longer ones are cut silently).
    static let maximumIdentifierLength = 63

    /// Starts connecting; the metadata tables and `tables` are created in the background, and every
    /// call waits for that (``ready()`` reports its failure).
    init(
        location: PostgresLocation, clock: @escaping @Sendable () -> Int64, stampsBy given: GivenClock? = nil,
        tables: [String],
        ownedTables: [String] = [], declarations: [TableDeclaration] = [], logger: Logger,
        changes: ChangeFeed = ChangeFeed(limit: 10_000)
    ) {
        self.changes = changes
        bus = PostgresChangeBus(feed: changes, announces: location.announcesChanges)
        self.location = location
        self.clock = clock
        givenClock = given
        self.logger = logger
        // One event loop for all connections, so that a request's statements can run on it from
        // the lease to the decoded rows (``EventLoopTaskExecutor``).
        let eventLoop = PostgresConnection.defaultEventLoopGroup.next()
        executor = EventLoopTaskExecutor(eventLoop)
        pool = PostgresConnectionPool(location: location, eventLoop: eventLoop, logger: logger)
        // Unstructured: every call of the store waits for the opening, whichever comes first.
        let opening = Task {
            try await self.prepare(tables: tables, ownedTables: ownedTables, declarations: declarations)
        }
        self.opening.withLock { $0 = opening }
        // The change bus's listener runs from the opening until ``close()``.
        listener.begin([
            { [bus] in
                guard (try? await opening.value) != nil else { return }
                await bus.run(self)
            }
        ])
    }

    /// The connections' event loop (``executor``): an insert's request then crosses threads
    /// twice (to the loop, and back to the HTTP server to be sent) instead of four times.
    var requestExecutor: (any TaskExecutor)? { executor }

    var dialect: SQLDialect { .postgres }

    /// PostgreSQL flushes its WAL before it answers a commit (`synchronous_commit`, on by default).
    var diskSyncs: Int? { nil }

    var databaseReads: Int? { nil }

    /// Every instance of the database writes it.
    var isShared: Bool { true }

    func ready() async throws(TableServiceError) {
        do {
            try await opened()
        } catch let error as ServiceSchemaError {
            throw .invalidConfiguration(error.description)
        } catch let error as PostgresTransactionError where error.closureError is ServiceSchemaError {
            // A schema file refused inside the transaction that would have applied it.
            throw .invalidConfiguration("\(error.closureError!)")
        } catch {
            throw .cannotOpenDatabase(
                "PostgreSQL at \(location.displayURL) cannot be used: \(Self.describe(error)). "
                    + "Check that the server runs, that the user, password and database are right, and --database.")
        }
    }

    func close() {
        listener.cancel()
        pool.close()
    }

    func schema(of table: String) -> TableSchema? {
        registry.schema(of: table)
    }

    func allSchemas() async throws(TableError) -> [TableSchema] {
        try await reloadAllSchemas()
        return registry.all()
    }

    func tableSummaries() async throws(TableError) -> [TableSummary] {
        try await reloadAllSchemas()
        var summaries: [TableSummary] = []
        for schema in registry.all() {
            var statement = PostgresStatement()
            statement.sql =
                "SELECT count(*) AS \"total\", count(*) FILTER (WHERE \"deleted\") AS \"deleted\" "
                + "FROM \(SQLDialect.quoted(schema.name))"
            let counts = try await values(statement) { row in
                let cells = row.makeRandomAccess()
                return (try cells["total"].decode(Int.self), try cells["deleted"].decode(Int.self))
            }
            let (total, deleted) = counts.first ?? (0, 0)
            summaries.append(TableSummary(schema: schema, live: total - deleted, deleted: deleted))
        }
        return summaries
    }

    // MARK: Running statements

    /// Runs a statement whose rows are items.
    func run(_ statement: PostgresStatement) async throws(TableError) -> [StoredItem] {
        try await values(statement) { row in try StoredItem(row) }
    }

    /// Runs a statement and turns each row into a value.
    func values<T: Sendable>(
        _ statement: PostgresStatement, _ transform: @escaping @Sendable (PostgresRow) throws -> T
    ) async throws(TableError) -> [T] {
        try await onEventLoop { () async throws(TableError) -> [T] in
            try await self.openedForRequest()
            do {
                return try await self.prepared.rows(statement, on: self.pool, logger: self.logger).map(transform)
            } catch {
                throw Self.tableError(error)
            }
        }
    }

    /// Runs `statement` prepared, as ``values(_:_:)`` runs every read.
    func query(_ statement: SQLStatement) async throws(TableError) -> [SQLRow] {
        try await values(PostgresStatement(statement), SQLRow.init)
    }

    func execute(_ statements: [SQLStatement]) async throws(TableError) {
        try await openedForRequest()
        do {
            try await pool.withTransaction(logger: logger) { connection in
                for statement in statements {
                    try await connection.query(statement.postgresQuery, logger: self.logger)
                }
            }
        } catch {
            throw Self.tableError(error)
        }
    }

    /// Runs `body` on the connections' event loop (``executor``): the lease, the statement's
    /// messages and its rows then stay on one thread instead of crossing between the caller's
    /// thread and the loop at every step. The caller goes back to its own executor afterwards
    /// (one switch; before, a statement took three). A request's handler runs on the loop anyway
    /// (``requestExecutor``); this is for calls from elsewhere (the fleet's bookkeeping, a
    /// backfill).
    func onEventLoop<T>(_ body: () async throws(TableError) -> T) async throws(TableError) -> T {
        try await withTaskExecutorPreference(executor, operation: body)
    }

    /// Waits for the metadata tables (at once when they are ready).
    func opened() async throws {
        if isOpen.load(ordering: .acquiring) { return }
        guard let task = opening.withLock({ $0 }) else { return }
        try await task.value
        isOpen.store(true, ordering: .releasing)
    }

    /// Like ``opened()``, failing as ``TableStorageFailure/unavailable(_:)`` (the request is answered
    /// 500 and logged).
    func openedForRequest() async throws(TableError) {
        do { try await opened() } catch {
            throw .storage(.unavailable("PostgreSQL is not available: \(Self.describe(error))"))
        }
    }
}
