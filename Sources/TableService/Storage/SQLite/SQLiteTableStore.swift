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
    private let latestStamps = Mutex<[String: Int64]>([:])
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
        // there when the fleet first opens the file: `prepareFleetTables`).
        StoreMigration("tableService.v3.installations") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS "__installations" (
                        "id" TEXT NOT NULL PRIMARY KEY, "lastWrite" INTEGER NOT NULL, "oldNames" TEXT NOT NULL DEFAULT '{}')
                    """)
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
                    db, sql: "SELECT count(*), coalesce(sum(deleted), 0) FROM \(SQLDialect.quoted(schema.name))")
                let total: Int = row?[0] ?? 0
                let deleted: Int = row?[1] ?? 0
                return TableSummary(schema: schema, live: total - deleted, deleted: deleted)
            }
        }
    }

    // MARK: Single items

    func insert(into table: String, _ changes: ItemChanges, scope: RowScope) async throws(TableError) -> StoredItem {
        let id = changes.id ?? UUID().uuidString.lowercased()
        return try await writePublished(table, scope) { db in
            // The columns as they were: a 409 carries the stored item without the ones this
            // insert would have added (its transaction is rolled back).
            let stored = try self.ensureTable(db, table)
            var schema = stored
            do {
                try self.ensureColumns(db, &schema, for: changes.fields)
            } catch {
                // An existing id is a 409 before a value that does not fit its column is a 400.
                try self.refuseExisting(db, stored, id: id, scope: scope)
                throw error
            }
            let now = try self.nextTimestamp(db, schema)
            // Every column, by position: the statement depends only on the table's shape.
            let version = StoredItem.version(for: now)
            var values = [
                id.databaseValue, now.databaseValue, now.databaseValue, version.databaseValue, false.databaseValue,
            ]
            values += repeatElement(DatabaseValue.null, count: schema.userColumns.count)
            for field in changes.fields {
                values[schema.position(of: field.name)!] = Self.databaseValue(SQLValue(field.value))
            }
            var columns = schema.selectList
            if let owner = scope.owner {
                columns += ", " + SQLDialect.quoted(RowScope.ownerColumn)
                values.append(owner.databaseValue)
            }
            // Cached per connection, like every statement a request runs: preparing one costs more than
            // running it. An id already there fails the primary key: no statement reads before.
            let statement = try db.cachedStatement(
                sql:
                    "INSERT INTO \(SQLDialect.quoted(schema.name)) (\(columns)) VALUES (\(sqlParameters(values.count)))"
            )
            do {
                try statement.execute(arguments: StatementArguments(positional: values))
            } catch let error as DatabaseError where Self.failure(error) == .duplicateID {
                try self.refuseExisting(db, stored, id: id, scope: scope)
                throw error
            }
            // Nor after: the item is the values written, as a SELECT would read them back (user
            // columns have no declared type, so SQLite stores values as given; see jsonValue).
            let fields = schema.userColumns.indices.map { index in
                let column = schema.columns[index]
                return StoredItem.Field(name: column.name, value: Self.jsonValue(values[index], in: column))
            }
            return StoredItem(id: id, createdAt: now, updatedAt: now, version: version, deleted: false, fields: fields)
        }
    }

    /// Throws ``TableError/schemaMoved(_:)`` when the table has more columns in this read's snapshot
    /// than `schema` (compiled before a write that added one committed): its rows would be answered
    /// without them.
    private static func checkColumns(_ db: Database, of schema: TableSchema) throws {
        let columns = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM __columns WHERE tableName = ?"), arguments: [schema.name])
        if let columns, columns > schema.userColumns.count { throw TableError.schemaMoved(schema.name) }
    }

    /// Reads row `id` and applies ``WriteRule`` to it: the row to write, or the row to answer
    /// unchanged (`unchanged` is true), or the refusal thrown.
    private func decide(
        _ request: WriteRule.Request, _ db: Database, _ schema: TableSchema, id: String, scope: RowScope
    ) throws -> (current: StoredItem, unchanged: Bool) {
        let current = try fetch(db, schema, id: id, scope: scope)
        let before =
            try WriteRule.needsVersionBeforeBackfill(request, current: current)
            ? versionBeforeBackfill(db, schema, current!) : nil
        switch WriteRule.decide(request, current: current, versionBeforeBackfill: before) {
        case .refuse(let error): throw error
        case .unchanged(let item): return (item, true)
        case .write: return (current!, false)
        }
    }

    /// Throws the 409 for an id already in the table: with the stored item when `scope` may see it.
    private func refuseExisting(_ db: Database, _ schema: TableSchema, id: String, scope: RowScope) throws {
        if let existing = try fetch(db, schema, id: id, scope: scope) { throw TableError.alreadyExists(existing) }
        if scope.owner != nil, try fetch(db, schema, id: id) != nil { throw TableError.alreadyExists(nil) }
    }

    func update(
        in table: String, id: String, _ changes: ItemChanges, check: VersionCheck, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard registry.schema(of: table) != nil else { throw .itemNotFound }
        return try await writePublished(table, scope) { db in
            var schema = try self.ensureTable(db, table)
            _ = try self.decide(.update(check), db, schema, id: id, scope: scope)
            try self.ensureColumns(db, &schema, for: changes.fields)
            let now = try self.nextTimestamp(db, schema)
            var assignments = ["\"updatedAt\" = ?", "\"version\" = ?"]
            var arguments: [(any DatabaseValueConvertible)?] = [now, StoredItem.version(for: now)]
            for field in changes.fields {
                assignments.append("\(SQLDialect.quoted(schema.column(named: field.name)!.name)) = ?")
                arguments.append(Self.databaseValue(SQLValue(field.value)))
            }
            arguments.append(id)
            let statement = try db.cachedStatement(
                sql: "UPDATE \(SQLDialect.quoted(schema.name)) SET \(assignments.joined(separator: ", ")) "
                    + "WHERE \"id\" = ? RETURNING \(schema.selectList)")
            return try Self.firstItem(statement, StatementArguments(arguments), schema)!
        }
    }

    func setDeleted(
        _ deleted: Bool, in table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard registry.schema(of: table) != nil else { throw .itemNotFound }
        return try await writePublished(table, scope) { db in
            let schema = try self.ensureTable(db, table)
            let decided = try self.decide(.setDeleted(deleted, ifMatch: ifMatch), db, schema, id: id, scope: scope)
            if decided.unchanged { return decided.current }
            let now = try self.nextTimestamp(db, schema)
            let statement = try db.cachedStatement(
                sql: "UPDATE \(SQLDialect.quoted(schema.name)) SET \"deleted\" = ?, \"updatedAt\" = ?, "
                    + "\"version\" = ? WHERE \"id\" = ? RETURNING \(schema.selectList)")
            return try Self.firstItem(statement, [deleted, now, StoredItem.version(for: now), id], schema)!
        }
    }

    func remove(
        from table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard registry.schema(of: table) != nil else { throw .itemNotFound }
        return try await writeNow { db in
            let schema = try self.ensureTable(db, table)
            let current = try self.decide(.remove(ifMatch: ifMatch), db, schema, id: id, scope: scope).current
            try db.cachedStatement(sql: "DELETE FROM \(SQLDialect.quoted(schema.name)) WHERE \"id\" = ?")
                .execute(arguments: [id])
            return current
        }
    }

    // MARK: Queries

    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage {
        // A filter past SQLite's own limits fails as `.queryTooComplex`: the filter's fault, a 400.
        try await read { db in try Self.runPage(db, query, encoder: encoder) }
    }

    /// Rows are encoded as they are read, inside one read transaction (so the count and the page agree).
    private static func runPage(_ db: Database, _ query: CompiledQuery, encoder: ItemJSONEncoder) throws -> TablePage {
        try checkColumns(db, of: query.schema)
        let count = try query.countSQL.map {
            try Int.fetchOne(db, sql: $0, arguments: arguments(query.countArguments)) ?? 0
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 320 * 64)
        bytes.append(UInt8(ascii: "["))
        let keys = ItemJSONEncoder.ColumnKeys(query.schema)
        var rows = 0
        let cursor = try Row.fetchCursor(db, sql: query.selectSQL, arguments: arguments(query.selectArguments))
        var hasMore: Bool?
        while let row = try cursor.next() {
            if query.probesNextRow, rows == query.top {
                hasMore = true
                break
            }
            if rows > 0 { bytes.append(UInt8(ascii: ",")) }
            try encoder.append(row: row, schema: query.schema, keys: keys, to: &bytes)
            rows += 1
        }
        bytes.append(UInt8(ascii: "]"))
        if query.probesNextRow, hasMore == nil { hasMore = false }
        return TablePage(items: bytes, count: count, rows: rows, hasMore: hasMore)
    }

    /// SQLite's plan for a compiled query (`EXPLAIN QUERY PLAN`), to check that it uses the indexes.
    func queryPlan(_ query: CompiledQuery) async throws(TableError) -> [String] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + query.selectSQL, arguments: Self.arguments(query.selectArguments)
            )
            .map { $0["detail"] as String? ?? "" }
        }
    }

    func rows(of table: String, limit: Int) async throws(TableError) -> (schema: TableSchema, items: [StoredItem]) {
        guard let schema = registry.schema(of: table) else { throw .tableNotFound(table) }
        let items = try await read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(schema.selectList) FROM \(SQLDialect.quoted(schema.name)) "
                    + "ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT ?",
                arguments: [limit]
            ).map { Self.item(from: $0, schema) }
        }
        return (schema, items)
    }

    func anyItem(in table: String, id: String, scope: RowScope) async throws(TableError) -> StoredItem? {
        for _ in 0..<Self.recompilesAtMost {
            guard let schema = registry.schema(of: table) else { return nil }
            do {
                return try readNow { db in
                    try Self.checkColumns(db, of: schema)
                    return try self.fetch(db, schema, id: id, scope: scope)
                }
            } catch .schemaMoved {
                // A write that added a column committed since `schema` was read: read it again.
                await Task.yield()
            }
        }
        throw .schemaMoved(table)
    }

    // MARK: Helpers

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(TableError) -> T {
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
    private func writePublished(
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
    func query(_ statement: SQLStatement) async throws(TableError) -> [[SQLValue]] {
        try readNow { db in
            try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: Self.arguments(statement.values))
                .map { $0.databaseValues.map(Self.sqlValue) }
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

    private func fetch(_ db: Database, _ schema: TableSchema, id: String, scope: RowScope = .all) throws -> StoredItem?
    {
        // Cached per connection: the SQL changes only when the table gains a column.
        var sql = "SELECT \(schema.selectList) FROM \(SQLDialect.quoted(schema.name)) WHERE \"id\" = ?"
        var arguments: StatementArguments = [id]
        if let owner = scope.owner {
            sql += " AND \(SQLDialect.quoted(RowScope.ownerColumn)) = ?"
            arguments += [owner]
        }
        return try Self.firstItem(db.cachedStatement(sql: sql), arguments, schema)
    }

    /// The first row `statement` gives as an item, decoded in place: GRDB's `fetchOne` copies the
    /// row (names and values) first, which showed in the CPU of every write.
    private static func firstItem(
        _ statement: Statement, _ arguments: StatementArguments, _ schema: TableSchema
    ) throws -> StoredItem? {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        // The cursor resets the statement when it goes: keep it until the row is read.
        return try withExtendedLifetime(rows) { try rows.next().map { item(from: $0, schema) } }
    }

    /// Makes `table` keep an owner per row: adds the hidden owner column (not in `__columns`, so
    /// never read into items) and an index for the owner's pulls. Rows written before have no owner
    /// and are seen by no user.
    private func keepOwners(_ db: Database, in table: String) throws {
        let schema = try ensureTable(db, table)
        let quoted = SQLDialect.quoted(schema.name)
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted))").map { $0["name"] as String }
        guard !columns.contains(RowScope.ownerColumn) else { return }
        try db.execute(sql: "ALTER TABLE \(quoted) ADD COLUMN \(SQLDialect.quoted(RowScope.ownerColumn)) TEXT")
        try db.execute(
            sql: "CREATE INDEX \(SQLDialect.quoted(schema.name + "__owner_updatedAt_id")) ON \(quoted) "
                + "(\(SQLDialect.quoted(RowScope.ownerColumn)), \"updatedAt\", \"id\", \"deleted\")")
    }

    /// The table's schema, creating the table (and its metadata) on first use.
    private func ensureTable(_ db: Database, _ name: String) throws -> TableSchema {
        if let schema = registry.schema(of: name) { return schema }
        let quoted = SQLDialect.quoted(name)
        try db.execute(
            sql: """
                CREATE TABLE \(quoted) (
                    "id" TEXT NOT NULL PRIMARY KEY, "createdAt" INTEGER NOT NULL, "updatedAt" INTEGER NOT NULL,
                    "version" TEXT NOT NULL, "deleted" INTEGER NOT NULL DEFAULT 0);
                CREATE UNIQUE INDEX \(SQLDialect.quoted(name + "__updatedAt_id")) ON \(quoted) ("updatedAt", "id", "deleted");
                """)
        try db.execute(sql: "INSERT INTO __tables (name, createdAt) VALUES (?, ?)", arguments: [name, clock()])
        let schema = TableSchema(name: name)
        registry.publish(schema, onCommitOf: db)
        return schema
    }

    /// Adds missing columns and checks that each value fits its column's type.
    private func ensureColumns(_ db: Database, _ schema: inout TableSchema, for fields: [StoredItem.Field]) throws {
        let changes = try schema.changes(for: fields)
        guard !changes.isEmpty else { return }
        for change in changes {
            switch change {
            case .setType(let name, let type):
                try db.execute(
                    sql: "UPDATE __columns SET type = ? WHERE tableName = ? AND name = ?",
                    arguments: [type.rawValue, schema.name, name])
            case .add(let name, let type):
                try db.execute(
                    sql: "ALTER TABLE \(SQLDialect.quoted(schema.name)) ADD COLUMN \(SQLDialect.quoted(name))")
                try db.execute(
                    sql: "INSERT INTO __columns (tableName, name, type, position) VALUES (?, ?, ?, ?)",
                    arguments: [schema.name, name, type.rawValue, schema.columns.count])
            }
            schema.apply([change])
        }
        registry.publish(schema, onCommitOf: db)
    }

    /// A timestamp for a write: now, or 1 ms past the table's latest `updatedAt` if that is not
    /// earlier; a write of `count` rows takes this one and the `count - 1` after it. The latest is read from the table once, then remembered at each commit (a write
    /// rolled back leaves it as it was).
    func nextTimestamp(_ db: Database, _ schema: TableSchema, count: Int64 = 1) throws -> Int64 {
        let table = schema.name
        let latest: Int64?
        if let remembered = latestStamps.withLock({ $0[table] }) {
            latest = remembered
        } else {
            latest = try Int64.fetchOne(db, sql: "SELECT max(\"updatedAt\") FROM \(SQLDialect.quoted(table))")
        }
        let stamp = latest.map { max(clock(), $0 + 1) } ?? clock()
        let last = stamp + count - 1
        db.afterNextTransaction(onCommit: { [self] _ in latestStamps.withLock { $0[table] = last } })
        return stamp
    }

    static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let bool): bool.databaseValue
        case .text(let string): string.databaseValue
        case .integer(let integer): integer.databaseValue
        case .double(let double): double.databaseValue
        }
    }

    /// A value read back as the stores' shared code reads it (a blob, which no table of theirs
    /// holds, as base64 text).
    static func sqlValue(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let double): .double(double)
        case .string(let string): .text(string)
        case .blob(let data): .text(data.base64EncodedString())
        }
    }

    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(positional: values.map(databaseValue))
    }

    /// A row selected with the schema's ``TableSchema/selectList`` as an item.
    static func item(from row: Row, _ schema: TableSchema) -> StoredItem {
        let fields = schema.userColumns.indices.map { index in
            let column = schema.columns[index]
            return StoredItem.Field(name: column.name, value: jsonValue(row[index], in: column))
        }
        return StoredItem(
            id: row[0], createdAt: row[1], updatedAt: row[2], version: row[3], deleted: row[4], fields: fields)
    }

    /// A value of a user column, as written or as read, as JSON: booleans are kept as 0 and 1, and
    /// text ends at its first NUL character, where GRDB's reading of it (a C string) ends.
    static func jsonValue(_ value: DatabaseValue, in column: Column) -> JSONValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): column.type == .boolean ? .bool(integer != 0) : .number(Double(integer))
        case .double(let double): .number(double)
        case .string(let string) where string.utf8.contains(0):
            .string(String(decoding: string.utf8.prefix { $0 != 0 }, as: UTF8.self))
        case .string(let string): .string(string)
        case .blob(let data): .string(data.base64EncodedString())
        }
    }
}
