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
    /// Carries commits between the instances (``PostgresChangeBus``), and its task.
    let bus: PostgresChangeBus
    private let listener = Mutex<Task<Void, Never>?>(nil)
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
        opening.withLock {
            $0 = Task {
                try await self.prepare(tables: tables, ownedTables: ownedTables, declarations: declarations)
                self.listener.withLock { listener in
                    listener = Task { await self.bus.run(self) }
                }
            }
        }
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
        listener.withLock { $0?.cancel() }
        pool.close()
    }

    func schema(of table: String) -> TableSchema? {
        registry.schema(of: table)
    }

    // MARK: Items

    func insert(into table: String, _ changes: ItemChanges, scope: RowScope) async throws(TableError) -> StoredItem {
        let id = changes.id ?? UUID().uuidString.lowercased()
        var schema = try await tableForWriting(table)
        schema = try await ensureColumns(schema, for: changes.fields)
        var statement = PostgresStatement()
        let stamp = statement.stampCTE(table: schema.name, given: givenClock)
        var names = [SystemColumn.id, SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version]
        var values = [statement.bind(.text(id)), stamp.value, stamp.value, stamp.version]
        for field in changes.fields {
            names.append(schema.column(named: field.name)!.name)
            values.append(statement.bind(SQLValue(field.value)))
        }
        if let owner = scope.owner {
            names.append(RowScope.ownerColumn)
            values.append(statement.bind(.text(owner)))
        }
        statement.sql +=
            "INSERT INTO \(SQLDialect.quoted(schema.name)) (\(names.map(SQLDialect.quoted).joined(separator: ", "))) "
            + "VALUES (\(values.joined(separator: ", "))) RETURNING *"
        do throws(TableError) {
            guard let stored = try await run(statement).first else { throw TableError.itemNotFound }
            return published(stored, in: table, scope: scope)
        } catch .storage(.duplicateID) {
            if let existing = try await anyItem(in: schema.name, id: id, scope: scope) {
                throw .alreadyExists(existing)
            }
            throw .alreadyExists(nil)
        }
    }

    func anyItem(in table: String, id: String, scope: RowScope) async throws(TableError) -> StoredItem? {
        guard let schema = try await knownSchema(of: table) else { return nil }
        var statement = PostgresStatement()
        statement.sql = "SELECT * FROM \(SQLDialect.quoted(schema.name)) WHERE \"id\" = \(statement.bind(.text(id)))"
        if let owner = scope.owner {
            statement.sql += " AND \(SQLDialect.quoted(RowScope.ownerColumn)) = \(statement.bind(.text(owner)))"
        }
        return try await run(statement).first
    }

    func update(
        in table: String, id: String, _ changes: ItemChanges, check: VersionCheck, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard var schema = try await knownSchema(of: table) else { throw .itemNotFound }
        schema = try await ensureColumns(schema, for: changes.fields)
        var check = check
        // A lost race is answered from the row that won it; a row that changed between the failed
        // update and the read (deleted, brought back) is tried again.
        for _ in 0..<3 {
            var statement = PostgresStatement()
            let stamp = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            var assignments = [Self.restamp(stamp.value), "\"version\" = \(stamp.version)"]
            for field in changes.fields {
                let column = SQLDialect.quoted(schema.column(named: field.name)!.name)
                assignments.append("\(column) = \(statement.bind(SQLValue(field.value)))")
            }
            let target = SQLDialect.quoted(schema.name)
            let conditions =
                statement.rowConditions(of: target, id: id, versions: [check.ifMatch, check.bodyVersion], scope: scope)
                + ["NOT \(target).\"deleted\""]
            statement.sql +=
                "UPDATE \(target) SET \(assignments.joined(separator: ", ")) "
                + "WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let stored = try await run(statement).first { return published(stored, in: table, scope: scope) }
            // Tried again against the row's version now (read before a schema backfill stamped it),
            // or as it was (the row changed between the update and the read).
            let current = try await decide(.update(check), in: schema.name, id: id, scope: scope).current
            if check.ifMatch != nil || check.bodyVersion != nil {
                check = VersionCheck(ifMatch: current.version, bodyVersion: nil)
            }
        }
        throw .storage(.keptChanging(id: id))
    }

    func setDeleted(
        _ deleted: Bool, in table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard let schema = try await knownSchema(of: table) else { throw .itemNotFound }
        var ifMatch = ifMatch
        for _ in 0..<3 {
            var statement = PostgresStatement()
            let stamp = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            let target = SQLDialect.quoted(schema.name)
            let conditions =
                statement.rowConditions(of: target, id: id, versions: [ifMatch], scope: scope)
                + [deleted ? "NOT \(target).\"deleted\"" : "\(target).\"deleted\""]
            statement.sql +=
                "UPDATE \(target) SET \"deleted\" = \(deleted ? "TRUE" : "FALSE"), \(Self.restamp(stamp.value)), "
                + "\"version\" = \(stamp.version) WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let stored = try await run(statement).first { return published(stored, in: table, scope: scope) }
            let decided = try await decide(
                .setDeleted(deleted, ifMatch: ifMatch), in: schema.name, id: id, scope: scope)
            if decided.unchanged { return decided.current }
            if ifMatch != nil { ifMatch = decided.current.version }
        }
        throw .storage(.keptChanging(id: id))
    }

    func remove(
        from table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard let schema = try await knownSchema(of: table) else { throw .itemNotFound }
        var ifMatch = ifMatch
        for _ in 0..<3 {
            var statement = PostgresStatement()
            // A rewrite: pages after this row move up (see PageCursors).
            _ = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            let target = SQLDialect.quoted(schema.name)
            let conditions = statement.rowConditions(of: target, id: id, versions: [ifMatch], scope: scope)
            statement.sql += "DELETE FROM \(target) WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let removed = try await run(statement).first { return removed }
            let current = try await decide(.remove(ifMatch: ifMatch), in: schema.name, id: id, scope: scope).current
            if ifMatch != nil { ifMatch = current.version }
        }
        throw .storage(.keptChanging(id: id))
    }

    /// The assignment of a rewritten row's `updatedAt`: its stamp, or one past the row's last when
    /// that is later (stamps of different writes may be equal; a row's own always move forward, so
    /// a puller positioned on the row's previous stamp sees it again).
    static func restamp(_ stamp: String) -> String {
        "\"updatedAt\" = greatest(\(stamp), \"updatedAt\" + 1)"
    }

    /// Reads row `id` after a conditional write found nothing to change, and applies
    /// ``WriteRule`` to it: the row to write again, or to answer unchanged (`unchanged` is true),
    /// or the refusal thrown.
    private func decide(
        _ request: WriteRule.Request, in table: String, id: String, scope: RowScope
    ) async throws(TableError) -> (current: StoredItem, unchanged: Bool) {
        let current = try await anyItem(in: table, id: id, scope: scope)
        let before =
            WriteRule.needsVersionBeforeBackfill(request, current: current)
            ? try await versionBeforeBackfill(in: table, current!) : nil
        switch WriteRule.decide(request, current: current, versionBeforeBackfill: before) {
        case .refuse(let error): throw error
        case .unchanged(let item): return (item, true)
        case .write: return (current!, false)
        }
    }

    // MARK: Queries

    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage {
        try await onEventLoop { () async throws(TableError) -> TablePage in
            try await self.pageOnEventLoop(query, encoder: encoder)
        }
    }

    private func pageOnEventLoop(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage
    {
        try await openedForRequest()
        guard let cut = query.horizon else { return try await page(query, below: nil, encoder: encoder) }
        // A pull: rows below the horizon only. A page that reaches the end is read again below a
        // horizon past every write acknowledged before the request, when the first cut left some out.
        let reading = try await horizon()
        let page = try await page(query, below: reading.horizon, encoder: encoder)
        guard page.rows < query.top || query.top == 0 else { return page }
        let fresh = try await freshHorizon(after: reading, table: query.schema.name, column: cut.column)
        guard fresh > reading.horizon else { return page }
        return try await self.page(query, below: fresh, encoder: encoder)
    }

    /// The page of `query`, positional reads cut at `horizon`.
    private func page(
        _ query: CompiledQuery, below horizon: Int64?, encoder: ItemJSONEncoder
    ) async throws(TableError)
        -> TablePage
    {
        let cut = { (arguments: [SQLValue]) in horizon.map { query.arguments(arguments, horizon: $0) } ?? arguments }
        let select = PostgresQuery(
            unsafeSQL: query.selectSQL, binds: PostgresStatement.bindings(cut(query.selectArguments)))
        do {
            guard let countSQL = query.countSQL else {
                if let seek = query.seek, query.top > 0 {
                    return try await pageFollowingCursors(
                        query, seek: seek, select: select, conditions: cut(query.countArguments), encoder: encoder)
                }
                return try await pool.withConnection { connection in
                    try await Self.encodePage(
                        try await connection.query(select, logger: self.logger), count: nil, query: query,
                        encoder: encoder
                    ).page
                }
            }
            let countQuery = PostgresQuery(
                unsafeSQL: countSQL, binds: PostgresStatement.bindings(cut(query.countArguments)))
            guard query.top > 0 else {
                // The count alone (`$top=0`): one statement.
                let count = try await pool.rows(countQuery, logger: logger).first?.decode(Int.self) ?? 0
                return TablePage(items: Array("[]".utf8), count: count, rows: 0)
            }
            return try await pool.withConnection { connection in
                // The count and the page from one snapshot.
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: self.logger)
                do {
                    let count =
                        try await connection.query(countQuery, logger: self.logger).collect().first?.decode(
                            Int.self) ?? 0
                    let page = try await Self.encodePage(
                        try await connection.query(select, logger: self.logger), count: count, query: query,
                        encoder: encoder
                    ).page
                    try await connection.query("COMMIT", logger: self.logger)
                    return page
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        } catch {
            throw Self.tableError(error)
        }
    }

    /// A page in `updatedAt, id` or `createdAt, id` order: after the row the previous page ended at
    /// when this instance served it and no row before it has changed since, else by `$skip` (see
    /// ``PageCursors``). Either way, remembers where the page ends.
    private func pageFollowingCursors(
        _ query: CompiledQuery, seek: CompiledQuery.Seek, select: PostgresQuery, conditions: [SQLValue],
        encoder: ItemJSONEncoder
    ) async throws -> TablePage {
        let table = SQLValue.text(query.schema.name)
        if query.skip > 0, let (cursor, position) = cursors.cursor(before: query.skip, in: query) {
            let values =
                conditions + [
                    .integer(cursor.stamp), .text(cursor.id), table, .integer(cursor.rewrites),
                    .integer(Int64(query.limit)), .integer(Int64(query.skip - position)),
                ]
            let seeking = PostgresQuery(unsafeSQL: seek.sql, binds: PostgresStatement.bindings(values))
            let (page, last) = try await pool.withConnection { connection in
                try await Self.encodePage(
                    try await connection.query(seeking, logger: self.logger), count: nil, query: query,
                    encoder: encoder)
            }
            if let last {
                try remember(last, of: query, seek: seek, rewrites: cursor.rewrites, position: query.skip + page.rows)
                return page
            }
        }
        // Read before the page: a rewrite between the two makes the count stale, never wrong.
        var statement = PostgresStatement()
        statement.sql = "SELECT \(PostgresStatement.rewrites(table: statement.bind(table)))"
        let rewrites = try await values(statement) { row in try row.decode(Int64.self) }.first
        let (page, last) = try await pool.withConnection { connection in
            try await Self.encodePage(
                try await connection.query(select, logger: self.logger), count: nil, query: query, encoder: encoder)
        }
        if let last, let rewrites {
            try remember(last, of: query, seek: seek, rewrites: rewrites, position: query.skip + page.rows)
        }
        return page
    }

    private func remember(
        _ row: PostgresRow, of query: CompiledQuery, seek: CompiledQuery.Seek, rewrites: Int64, position: Int
    ) throws {
        let cells = row.makeRandomAccess()
        let cursor = PageCursors.Cursor(
            stamp: try cells[seek.column].decode(Int64.self), id: try cells[SystemColumn.id].decode(String.self),
            rewrites: rewrites)
        cursors.remember(cursor, before: position, in: query)
    }

    /// The page's rows as a JSON array with the count, and its last row (not the probed one).
    private static func encodePage(
        _ rows: PostgresRowSequence, count: Int?, query: CompiledQuery, encoder: ItemJSONEncoder
    ) async throws -> (page: TablePage, last: PostgresRow?) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 320 * 64)
        bytes.append(UInt8(ascii: "["))
        var written = 0
        var layout: ItemJSONEncoder.PostgresLayout?
        var last: PostgresRow?
        var hasMore: Bool? = query.probesNextRow ? false : nil
        for try await row in rows {
            if query.probesNextRow, written == query.top {
                // The probed row: not answered (and the last one, by its LIMIT).
                hasMore = true
                continue
            }
            last = row
            if written > 0 { bytes.append(UInt8(ascii: ",")) }
            if written == 0, encoder.writesRowsDirectly { layout = ItemJSONEncoder.PostgresLayout(row) }
            if let layout {
                try encoder.append(row: row, layout: layout, to: &bytes)
            } else {
                try encoder.append(row: row, to: &bytes)
            }
            written += 1
        }
        bytes.append(UInt8(ascii: "]"))
        return (TablePage(items: bytes, count: count, rows: written, hasMore: hasMore), last)
    }

    func rows(of table: String, limit: Int) async throws(TableError) -> (schema: TableSchema, items: [StoredItem]) {
        guard let schema = try await reloadSchema(of: table) else { throw .tableNotFound(table) }
        var statement = PostgresStatement()
        statement.sql =
            "SELECT * FROM \(SQLDialect.quoted(schema.name)) ORDER BY \"updatedAt\" DESC, \"id\" DESC "
            + "LIMIT \(statement.bind(.integer(Int64(limit))))"
        return (schema, try await run(statement))
    }

    /// Tells the instances' subscribers of a row this instance wrote (``PostgresChangeBus``).
    private func published(_ item: StoredItem, in table: String, scope: RowScope) -> StoredItem {
        bus.committed(
            .init(table: table, cursor: ChangeCursor(updatedAt: item.updatedAt, id: item.id), owner: scope.owner))
        return item
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
                "SELECT count(*), count(*) FILTER (WHERE \"deleted\") FROM \(SQLDialect.quoted(schema.name))"
            let counts = try await values(statement) { row in try row.decode((Int, Int).self) }
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
    func query(_ statement: SQLStatement) async throws(TableError) -> [[SQLValue]] {
        try await values(PostgresStatement(statement)) { row in try row.map(SQLValue.init) }
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
