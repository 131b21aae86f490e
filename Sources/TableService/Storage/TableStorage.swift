import Foundation
import SyncProtocol

/// Where the table service keeps its tables: one SQLite file (``SQLiteTableStore``, the embedded
/// default) or a PostgreSQL database shared by any number of service instances
/// (``PostgresTableStore``). The controller and the service page speak only to this protocol;
/// each store keeps the protocol's rules for its database:
///
/// - ids are unique per table, soft-deleted rows included (an insert of an existing id is a 409
///   carrying the stored item);
/// - every write gives the row a new `version` (base64 of 8 bytes, as always) and a greater
///   `updatedAt`, and no row ever commits behind a position a positional read (a pull, a change
///   cursor) has answered, so that the keyset cursor of incremental pull never skips a row: SQLite
///   stamps in commit order, PostgreSQL answers only below its horizon (see
///   `Sources/TableService/IncrementalPull.md`);
/// - a version check (`If-Match` or the body's `version`) and the write it guards are one atomic
///   step, whatever number of instances share the database.
protocol TableStorage: Sendable {
    /// The SQL the store runs, for ``QueryCompiler``.
    var dialect: SQLDialect { get }

    /// How many times this process synced the database's log to disk to acknowledge writes; nil
    /// when the database does that itself (PostgreSQL).
    var diskSyncs: Int? { get }

    /// Who waits for this store's changes; the store tells it of every row it stamps.
    var changes: ChangeFeed { get }

    /// Where a request that awaits this store goes on after its first answer: the thread its
    /// answers arrive on (PostgreSQL: its connections' event loop), so that the request finishes
    /// there; nil for a store that answers where it is called (SQLite).
    var requestExecutor: (any TaskExecutor)? { get }
    /// The life of the data the store answers from (``ServiceEpoch``); nil until a PostgreSQL store
    /// has read it.
    var epoch: ServiceEpoch? { get }

    /// How many read transactions this process ran on the database (what an idle subscriber must
    /// not cost); nil when the database counts them itself (PostgreSQL's `pg_stat_database`).
    var databaseReads: Int? { get }

    /// The schema of `table` as this process last saw it, `nil` for a table it does not know.
    func schema(of table: String) -> TableSchema?

    /// The schema of `table` read again from the database (another instance may have added
    /// columns or the table itself); `nil` when the table does not exist.
    func reloadSchema(of table: String) async throws(TableError) -> TableSchema?

    /// Waits until the store is open and prepared (at once for SQLite, which opens in `init`).
    func ready() async throws(TableServiceError)

    /// Every table's schema, sorted by name (read again from the database when others may change it).
    func allSchemas() async throws(TableError) -> [TableSchema]

    /// Every table with its number of live and soft-deleted rows, sorted by name.
    func tableSummaries() async throws(TableError) -> [TableSummary]

    /// Inserts a new item (the table and its columns are created as needed), owned by the
    /// scope's user if any; 409 when the id exists (soft-deleted or not), carrying the stored item
    /// only when it is in `scope`.
    func insert(into table: String, _ changes: ItemChanges, scope: RowScope) async throws(TableError) -> StoredItem

    /// The item `id` in `scope` whether soft-deleted or not, `nil` if missing (or another owner's).
    func anyItem(in table: String, id: String, scope: RowScope) async throws(TableError) -> StoredItem?

    /// Merges `changes` into the live item `id` if its version is the one `check` expects
    /// (else 412 or 409 carrying the stored item); 404 when missing, soft-deleted or out of `scope`.
    func update(
        in table: String, id: String, _ changes: ItemChanges, check: VersionCheck, scope: RowScope
    ) async throws(TableError) -> StoredItem

    /// Soft-deletes (`deleted: true`, 404 when already deleted) or brings back the item `id`
    /// (a live item is returned unchanged); 412 on a stale `ifMatch`; 404 out of `scope`.
    func setDeleted(
        _ deleted: Bool, in table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem

    /// Removes the item `id` (for tables declared without soft delete) and returns it as it was;
    /// 404 when missing or out of `scope`, 412 on a stale `ifMatch`.
    func remove(
        from table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem

    /// The page of rows matching a compiled query as JSON, with the count when the query has a
    /// count statement; the count and the rows agree.
    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) async throws(TableError) -> TablePage

    /// Up to `limit` rows of `table` (soft-deleted ones included), newest first.
    func rows(of table: String, limit: Int) async throws(TableError) -> (schema: TableSchema, items: [StoredItem])

    /// Stamps the next batch of up to `limit` rows of `pass` (its changes' new values, and a new
    /// `updatedAt` and `version` for each row, so incremental pull brings them), in one set-based
    /// statement, moving the cursors of its changes in the same transaction; returns the rows
    /// stamped (fewer than `limit` once the pass is done) and how long the batch held the table's
    /// writers. Changes another instance finished are left out.
    func backfillBatch(_ pass: BackfillPass, limit: Int) async throws(TableError) -> BackfillBatch

    /// Writes waiting for the write lock or in their transaction, when the store can tell (the
    /// backfill lets them in between its batches); `nil` otherwise.
    var writesUnderWay: Int? { get }

    /// The version the row `current` of `table` had before schema backfills stamped it, while no
    /// one has written it since (see ``BackfillMarker``); nil otherwise.
    func versionBeforeBackfill(in table: String, _ current: StoredItem) async throws(TableError) -> String?

    /// Whether other instances may write the same database (PostgreSQL): what this process
    /// keeps in memory of it is then read again when shown.
    var isShared: Bool { get }

    /// The position of the newest row of `table` that `scope` may see (``ChangeCursor/start`` when
    /// there is none): no row commits behind it later. Nil when the table does not exist.
    func latestChange(in table: String, scope: RowScope) async throws(TableError) -> ChangeCursor?

    /// The rows of a read both stores make alike (the metadata tables, the newest row of a table),
    /// each read by column name: what the members written once for both stores read through.
    func query(_ statement: SQLStatement) async throws(TableError) -> [SQLRow]

    /// Runs `statements` in one write transaction, acknowledged as every write is (durable on return).
    func execute(_ statements: [SQLStatement]) async throws(TableError)

    /// Closes the store's connections (without waiting for them); it answers nothing afterwards.
    func close()
}

/// One table and how many rows it holds.
struct TableSummary: Sendable {
    let schema: TableSchema
    let live: Int
    let deleted: Int
}

/// A page of a list request: its items as a JSON array, and the count of all matching rows
/// when the query asked for it. The protocol's ``PageEnvelope`` makes the body.
struct TablePage: Sendable {
    /// `[item,item,…]`.
    let items: [UInt8]
    /// The rows matching the query, ignoring `$skip` and `$top`; `nil` unless counted.
    let count: Int?
    /// The number of items in it.
    let rows: Int
    /// Whether rows follow the page, when the query probed for them (``CompiledQuery/probesNextRow``).
    var hasMore: Bool? = nil
}

/// The versions a write expects the stored item to have.
struct VersionCheck: Sendable, Equatable {
    /// From `If-Match`; a mismatch is a 412.
    var ifMatch: String?
    /// From the body's `version`; a mismatch is a 409 (412 in the legacy protocol).
    var bodyVersion: String?
    /// The status of a stale body version.
    var bodyVersionStatus: Int = 409

    /// The check with `before` (the version a row had before schema backfills stamped it, see
    /// ``BackfillMarker``) accepted as the current version: a client that read the row before the
    /// backfill changed nothing the backfill set, so its write does not conflict with it.
    func accepting(versionBeforeBackfill before: String?) -> VersionCheck {
        guard let before else { return self }
        var relaxed = self
        if relaxed.ifMatch == before { relaxed.ifMatch = nil }
        if relaxed.bodyVersion == before { relaxed.bodyVersion = nil }
        return relaxed
    }

    /// The error for a stored item whose version is not the expected one, `nil` when it is.
    func failure(for current: StoredItem) -> TableError? {
        if let ifMatch, ifMatch != current.version { return .preconditionFailed(current) }
        if let bodyVersion, bodyVersion != current.version {
            return bodyVersionStatus == 412 ? .preconditionFailed(current) : .conflict(current)
        }
        return nil
    }
}

extension TableStorage {
    /// The cached schema of `table`, or the database's when this process has not met the table yet.
    func knownSchema(of table: String) async throws(TableError) -> TableSchema? {
        if let schema = schema(of: table) { return schema }
        return try await reloadSchema(of: table)
    }

    /// The newest row: what a store whose writes commit in stamp order answers (SQLite).
    func latestChange(in table: String, scope: RowScope) async throws(TableError) -> ChangeCursor? {
        guard let schema = try await knownSchema(of: table) else { return nil }
        var statement = SQLStatement(sql: "SELECT \"updatedAt\", \"id\" FROM \(SQLDialect.quoted(schema.name))")
        if let owner = scope.owner {
            statement.sql += " WHERE \(SQLDialect.quoted(RowScope.ownerColumn)) = ?"
            statement.values.append(.text(owner))
        }
        statement.sql += " ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT 1"
        guard let row = try await query(statement).first else { return .start }
        return ChangeCursor(updatedAt: try row.integer("updatedAt"), id: try row.text("id"))
    }

    /// The live item `id`; 404 when missing, soft-deleted or out of `scope`.
    func item(in table: String, id: String, scope: RowScope = .all) async throws(TableError) -> StoredItem {
        guard let found = try await anyItem(in: table, id: id, scope: scope), !found.deleted else {
            throw .itemNotFound
        }
        return found
    }

    /// Compiles a list request for `table`. A name the cached schema does not know is looked up
    /// once more in the database, since another instance may have just added that column.
    /// How many times ``page(_:table:style:declaration:scope:)`` compiles a page again before it gives up.
    static var recompilesAtMost: Int { 100 }

    /// The page `options` ask for, compiled from the table's schema and read. A write that adds a
    /// column can commit between the two: the store then finds the page's rows hold a column its SQL
    /// does not select (``TableError/schemaMoved(_:)``), and the page is compiled again with the
    /// schema as it is now, so that no row is answered without a value it has.
    func page(
        _ options: QueryOptions, table: String, style: ProtocolStyle, declaration: TableDeclaration? = nil,
        scope: RowScope = .all
    ) async throws(TableError) -> (query: CompiledQuery, page: TablePage) {
        var attempts = 0
        while true {
            let query = try await compile(options, table: table, style: style, declaration: declaration, scope: scope)
            do {
                return (
                    query, try await page(query, encoder: ItemJSONEncoder(style: style, selection: query.selection))
                )
            } catch .schemaMoved(let table) {
                // The schema is published as the write commits: the next compile sees the column.
                attempts += 1
                if attempts == Self.recompilesAtMost { throw .schemaMoved(table) }
                await Task.yield()
            }
        }
    }

    func compile(
        _ options: QueryOptions, table: String, style: ProtocolStyle, declaration: TableDeclaration? = nil,
        scope: RowScope = .all
    ) async throws(TableError) -> CompiledQuery {
        guard let schema = try await knownSchema(of: table) else { throw .tableNotFound(table) }
        do {
            return try QueryCompiler.compile(
                options, schema: schema, dialect: dialect, scope: scope, rules: style.queryRules,
                resolve: style.resolver(for: schema, declaration: declaration))
        } catch .invalidQuery(let message) {
            guard let fresh = try await reloadSchema(of: table), fresh.columns.count != schema.columns.count else {
                throw .invalidQuery(message)
            }
            return try QueryCompiler.compile(
                options, schema: fresh, dialect: dialect, scope: scope, rules: style.queryRules,
                resolve: style.resolver(for: fresh, declaration: declaration))
        }
    }
}
