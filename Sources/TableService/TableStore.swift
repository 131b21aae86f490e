import Foundation
import GRDB
import Storage
import SyncProtocol

/// The tables in one SQLite file: dynamic schema, soft delete, versions and strictly increasing
/// `updatedAt` per table. Every check-then-write happens inside one write transaction.
///
/// Dates are stored as integer milliseconds; each table has an index on `(updatedAt, id, deleted)`
/// so that the keyset cursor `(updatedAt gt T) or (updatedAt eq T and id gt 'I')` is a range scan.
final class TableStore: Sendable {
    private let database: any DatabaseWriter
    let registry = SchemaRegistry()
    private let clock: @Sendable () -> Int64

    static let migrations: [StoreMigration] = [
        StoreMigration("tableService.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE __tables (name TEXT NOT NULL PRIMARY KEY, createdAt INTEGER NOT NULL);
                    CREATE TABLE __columns (
                        tableName TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL, position INTEGER NOT NULL,
                        PRIMARY KEY (tableName, name));
                    """)
        }
    ]

    /// Opens the file at `path` (or a private in-memory database when `nil`).
    init(path: String?, clock: @escaping @Sendable () -> Int64 = TableStore.systemClock) throws(TableServiceError) {
        do {
            if let path {
                database = try StoreDatabase.open(at: path, migrations: Self.migrations)
            } else {
                database = try StoreDatabase.inMemory(migrations: Self.migrations)
            }
        } catch {
            throw .cannotOpenDatabase(error.description)
        }
        self.clock = clock
        do {
            try database.read { db in try registry.load(db) }
        } catch {
            throw .cannotOpenDatabase("\(error)")
        }
    }

    /// Milliseconds since 1970 by the system clock.
    static let systemClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    // MARK: Tables

    /// Creates `name` (with no user columns) if it does not exist.
    func createTable(_ name: String) throws(TableError) {
        try write { db in _ = try self.ensureTable(db, name) }
    }

    /// The number of live and soft-deleted rows of each table.
    func tableSummaries() throws(TableError) -> [(schema: TableSchema, live: Int, deleted: Int)] {
        let schemas = registry.all()
        return try read { db in
            try schemas.map { schema in
                let row = try Row.fetchOne(
                    db, sql: "SELECT count(*), coalesce(sum(deleted), 0) FROM \(schema.name.quotedDatabaseIdentifier)")
                let total: Int = row?[0] ?? 0
                let deleted: Int = row?[1] ?? 0
                return (schema, total - deleted, deleted)
            }
        }
    }

    // MARK: Single items

    /// Inserts a new item; 409 when the id exists (soft-deleted or not), with the server's item
    /// only when it is the caller's. An owner's row is written with its ``RowScope/owner(_:)``.
    func insert(into table: String, _ changes: ItemChanges, scope: RowScope = .all) throws(TableError) -> StoredItem {
        let id = changes.id ?? UUID().uuidString.lowercased()
        return try write { db in
            var schema = try self.ensureTable(db, table)
            if let existing = try self.fetch(db, schema, id: id, scope: scope) {
                throw TableError.alreadyExists(existing)
            }
            if scope.owner != nil, try self.fetch(db, schema, id: id) != nil { throw TableError.alreadyExists(nil) }
            try self.ensureColumns(db, &schema, for: changes.fields)
            let now = try self.nextTimestamp(db, schema)
            var names =
                [
                    SystemColumn.id, SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version,
                    SystemColumn.deleted,
                ] + changes.fields.map { schema.column(named: $0.name)!.name }
            var arguments: [(any DatabaseValueConvertible)?] = [id, now, now, Self.version(for: now), false]
            arguments += changes.fields.map { Self.databaseValue($0.value) }
            if let owner = scope.owner {
                names.append(RowScope.ownerColumn)
                arguments.append(owner)
            }
            // Cached per connection, like every statement a request runs: preparing one costs more than
            // running it.
            try db.cachedStatement(
                sql: "INSERT INTO \(schema.name.quotedDatabaseIdentifier) "
                    + "(\(names.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES "
                    + "(\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
            ).execute(arguments: StatementArguments(arguments))
            return try self.fetch(db, schema, id: id)!
        }
    }

    /// The live item `id`; 404 when missing, soft-deleted or out of `scope`.
    func item(in table: String, id: String, scope: RowScope = .all) throws(TableError) -> StoredItem {
        guard let schema = registry.schema(of: table) else { throw .itemNotFound }
        let found = try read { db in try self.fetch(db, schema, id: id, scope: scope) }
        guard let found, !found.deleted else { throw .itemNotFound }
        return found
    }

    /// Merges `changes` into the live item `id` after checking `ifMatch` (412) and the body's
    /// version (`staleBodyVersion` decides the status: 409 in v2, 412 in the legacy protocol).
    func update(
        in table: String, id: String, _ changes: ItemChanges, ifMatch: String?, bodyVersionStatus: Int = 409,
        scope: RowScope = .all
    ) throws(TableError) -> StoredItem {
        guard registry.schema(of: table) != nil else { throw .itemNotFound }
        return try write { db in
            var schema = try self.ensureTable(db, table)
            let current = try self.liveItem(db, schema, id: id, ifMatch: ifMatch, scope: scope)
            if let version = changes.version, version != current.version {
                throw bodyVersionStatus == 412 ? TableError.preconditionFailed(current) : TableError.conflict(current)
            }
            try self.ensureColumns(db, &schema, for: changes.fields)
            let now = try self.nextTimestamp(db, schema)
            var assignments = ["\"updatedAt\" = ?", "\"version\" = ?"]
            var arguments: [(any DatabaseValueConvertible)?] = [now, Self.version(for: now)]
            for field in changes.fields {
                assignments.append("\(schema.column(named: field.name)!.name.quotedDatabaseIdentifier) = ?")
                arguments.append(Self.databaseValue(field.value))
            }
            arguments.append(id)
            try db.cachedStatement(
                sql: "UPDATE \(schema.name.quotedDatabaseIdentifier) SET \(assignments.joined(separator: ", ")) "
                    + "WHERE \"id\" = ?"
            ).execute(arguments: StatementArguments(arguments))
            return try self.fetch(db, schema, id: id)!
        }
    }

    /// Soft-deletes the live item `id` (a write: new version and `updatedAt`); 412 on a stale `ifMatch`.
    func delete(
        from table: String, id: String, ifMatch: String?, scope: RowScope = .all
    ) throws(TableError)
        -> StoredItem
    {
        try setDeleted(true, table: table, id: id, ifMatch: ifMatch, scope: scope)
    }

    /// Brings back the soft-deleted item `id`; a live item is returned unchanged.
    func undelete(
        in table: String, id: String, ifMatch: String?, scope: RowScope = .all
    ) throws(TableError)
        -> StoredItem
    {
        try setDeleted(false, table: table, id: id, ifMatch: ifMatch, scope: scope)
    }

    private func setDeleted(
        _ deleted: Bool, table: String, id: String, ifMatch: String?, scope: RowScope
    ) throws(TableError)
        -> StoredItem
    {
        guard registry.schema(of: table) != nil else { throw .itemNotFound }
        return try write { db in
            let schema = try self.ensureTable(db, table)
            guard let current = try self.fetch(db, schema, id: id, scope: scope) else { throw TableError.itemNotFound }
            if deleted, current.deleted { throw TableError.itemNotFound }
            if let ifMatch, ifMatch != current.version { throw TableError.preconditionFailed(current) }
            if current.deleted == deleted { return current }
            let now = try self.nextTimestamp(db, schema)
            try db.cachedStatement(
                sql: "UPDATE \(schema.name.quotedDatabaseIdentifier) SET \"deleted\" = ?, \"updatedAt\" = ?, "
                    + "\"version\" = ? WHERE \"id\" = ?"
            ).execute(arguments: [deleted, now, Self.version(for: now), id])
            return try self.fetch(db, schema, id: id)!
        }
    }

    // MARK: Queries

    /// The page of rows matching a compiled query as JSON (an array, or `{"results": [...], "count": N}`
    /// when the query asks for the count), and how many rows it holds. Rows are encoded as they are
    /// read, inside one read transaction (so the count and the page agree).
    func page(_ query: CompiledQuery, encoder: ItemJSONEncoder) throws(TableError) -> (body: Data, rows: Int) {
        do {
            return try runPage(query, encoder: encoder)
        } catch .storage(let detail) where Self.tooComplex(detail) {
            // SQLite's own limits (parser stack, expression depth, variables): the filter's fault, not ours.
            throw .invalidQuery(
                "The $filter is too complex for the database (too deeply nested or too many conditions); "
                    + "simplify it or split the query.")
        }
    }

    private static func tooComplex(_ detail: String) -> Bool {
        ["parser stack overflow", "Expression tree is too large", "too many SQL variables", "too many terms"]
            .contains { detail.contains($0) }
    }

    private func runPage(_ query: CompiledQuery, encoder: ItemJSONEncoder) throws(TableError) -> (body: Data, rows: Int)
    {
        try read { db in
            let count = try query.countSQL.map {
                try Int.fetchOne(db, sql: $0, arguments: query.countArguments) ?? 0
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(64 + 320 * 64)
            if count != nil { bytes += Array(#"{"results":"#.utf8) }
            bytes.append(UInt8(ascii: "["))
            let keys = ItemJSONEncoder.ColumnKeys(query.schema)
            var rows = 0
            let cursor = try Row.fetchCursor(db, sql: query.selectSQL, arguments: query.selectArguments)
            while let row = try cursor.next() {
                if rows > 0 { bytes.append(UInt8(ascii: ",")) }
                try encoder.append(row: row, schema: query.schema, keys: keys, to: &bytes)
                rows += 1
            }
            bytes.append(UInt8(ascii: "]"))
            if let count { bytes += Array(#","count":\#(count)}"#.utf8) }
            return (Data(bytes), rows)
        }
    }

    /// SQLite's plan for a compiled query (`EXPLAIN QUERY PLAN`), to check that it uses the indexes.
    func queryPlan(_ query: CompiledQuery) throws(TableError) -> [String] {
        try read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + query.selectSQL, arguments: query.selectArguments)
                .map { $0["detail"] as String? ?? "" }
        }
    }

    /// Every row of `table` (soft-deleted ones included), newest first, for the service's page.
    func rows(of table: String, limit: Int) throws(TableError) -> (schema: TableSchema, items: [StoredItem]) {
        guard let schema = registry.schema(of: table) else { throw .tableNotFound(table) }
        let items = try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(Self.columnList(schema)) FROM \(schema.name.quotedDatabaseIdentifier) "
                    + "ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT ?",
                arguments: [limit]
            ).map { Self.item(from: $0, schema) }
        }
        return (schema, items)
    }

    /// The item `id` whether soft-deleted or not, `nil` if missing.
    func anyItem(in table: String, id: String) throws(TableError) -> StoredItem? {
        guard let schema = registry.schema(of: table) else { return nil }
        return try read { db in try self.fetch(db, schema, id: id) }
    }

    // MARK: Helpers

    private func read<T>(_ body: (Database) throws -> T) throws(TableError) -> T {
        do {
            return try database.read(body)
        } catch let error as TableError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    private func write<T>(_ body: (Database) throws -> T) throws(TableError) -> T {
        do {
            return try database.write(body)
        } catch let error as TableError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    private func liveItem(
        _ db: Database, _ schema: TableSchema, id: String, ifMatch: String?, scope: RowScope
    ) throws -> StoredItem {
        guard let current = try fetch(db, schema, id: id, scope: scope), !current.deleted else {
            throw TableError.itemNotFound
        }
        if let ifMatch, ifMatch != current.version { throw TableError.preconditionFailed(current) }
        return current
    }

    private func fetch(
        _ db: Database, _ schema: TableSchema, id: String, scope: RowScope = .all
    ) throws
        -> StoredItem?
    {
        // Cached per connection: the SQL changes only when the table gains a column.
        var sql = "SELECT \(Self.columnList(schema)) FROM \(schema.name.quotedDatabaseIdentifier) WHERE \"id\" = ?"
        var arguments: StatementArguments = [id]
        if let owner = scope.owner {
            sql += " AND \(RowScope.ownerColumn.quotedDatabaseIdentifier) = ?"
            arguments += [owner]
        }
        return try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments).map { Self.item(from: $0, schema) }
    }

    /// Makes `table` keep an owner per row: creates it if needed, adds the hidden owner column
    /// and an index for the owner's pulls. Rows written before have no owner and are seen by no user.
    func keepOwners(in table: String) throws(TableError) {
        try write { db in
            let schema = try self.ensureTable(db, table)
            let quoted = schema.name.quotedDatabaseIdentifier
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted))").map { $0["name"] as String }
            guard !columns.contains(RowScope.ownerColumn) else { return }
            try db.execute(
                sql: "ALTER TABLE \(quoted) ADD COLUMN \(RowScope.ownerColumn.quotedDatabaseIdentifier) TEXT")
            try db.execute(
                sql: "CREATE INDEX \((schema.name + "__owner_updatedAt_id").quotedDatabaseIdentifier) ON \(quoted) "
                    + "(\(RowScope.ownerColumn.quotedDatabaseIdentifier), \"updatedAt\", \"id\", \"deleted\")")
        }
    }

    /// The table's schema, creating the table (and its metadata) on first use.
    private func ensureTable(_ db: Database, _ name: String) throws -> TableSchema {
        if let schema = registry.schema(of: name) { return schema }
        let quoted = name.quotedDatabaseIdentifier
        try db.execute(
            sql: """
                CREATE TABLE \(quoted) (
                    "id" TEXT NOT NULL PRIMARY KEY, "createdAt" INTEGER NOT NULL, "updatedAt" INTEGER NOT NULL,
                    "version" TEXT NOT NULL, "deleted" INTEGER NOT NULL DEFAULT 0);
                CREATE UNIQUE INDEX \((name + "__updatedAt_id").quotedDatabaseIdentifier) ON \(quoted) ("updatedAt", "id", "deleted");
                """)
        try db.execute(sql: "INSERT INTO __tables (name, createdAt) VALUES (?, ?)", arguments: [name, clock()])
        let schema = TableSchema(name: name)
        registry.publish(schema, onCommitOf: db)
        return schema
    }

    /// Adds missing columns and checks that each value fits its column's type.
    private func ensureColumns(_ db: Database, _ schema: inout TableSchema, for fields: [StoredItem.Field]) throws {
        var changed = false
        for field in fields {
            let wanted = ColumnType(of: field.value)
            if let column = schema.column(named: field.name) {
                guard let wanted, column.type != wanted else { continue }
                if column.type == .unknown {
                    try db.execute(
                        sql: "UPDATE __columns SET type = ? WHERE tableName = ? AND name = ?",
                        arguments: [wanted.rawValue, schema.name, column.name])
                    schema.setType(wanted, of: column.name)
                    changed = true
                } else {
                    throw TableError.invalidRequest(
                        "The property '\(field.name)' holds \(column.type.plural) in table '\(schema.name)', "
                            + "but this request sends \(wanted.plural). Send a value of that type, or null.")
                }
            } else {
                let type = wanted ?? .unknown
                try db.execute(
                    sql:
                        "ALTER TABLE \(schema.name.quotedDatabaseIdentifier) ADD COLUMN \(field.name.quotedDatabaseIdentifier)"
                )
                try db.execute(
                    sql: "INSERT INTO __columns (tableName, name, type, position) VALUES (?, ?, ?, ?)",
                    arguments: [schema.name, field.name, type.rawValue, schema.columns.count])
                schema.add(Column(name: field.name, type: type, isSystem: false))
                changed = true
            }
        }
        if changed { registry.publish(schema, onCommitOf: db) }
    }

    /// A timestamp for a write: now, or 1 ms past the table's latest `updatedAt` if that is not earlier.
    private func nextTimestamp(_ db: Database, _ schema: TableSchema) throws -> Int64 {
        let latest =
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT max(\"updatedAt\") FROM \(schema.name.quotedDatabaseIdentifier)"))
            ?? Int64.min
        return max(clock(), latest == Int64.min ? Int64.min : latest + 1)
    }

    /// The version written with a timestamp: opaque to clients (base64 of the 8 bytes of the
    /// table-unique `updatedAt`, so it changes with every write).
    static func version(for timestamp: Int64) -> String {
        withUnsafeBytes(of: timestamp.bigEndian) { Data($0).base64EncodedString() }
    }

    static func columnList(_ schema: TableSchema) -> String {
        schema.columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
    }

    static func databaseValue(_ value: JSONValue) -> (any DatabaseValueConvertible)? {
        switch value {
        case .null, .array, .object: nil
        case .bool(let bool): bool
        case .string(let string): string
        case .number(let number):
            if number.rounded() == number, abs(number) < 9_007_199_254_740_992 { Int64(number) } else { number }
        }
    }

    /// A row selected with ``columnList(_:)`` as an item.
    static func item(from row: Row, _ schema: TableSchema) -> StoredItem {
        var fields: [StoredItem.Field] = []
        let system = TableSchema.systemColumns.count
        fields.reserveCapacity(schema.columns.count - system)
        for index in system..<schema.columns.count {
            let column = schema.columns[index]
            let value: JSONValue
            switch (row[index] as DatabaseValue).storage {
            case .null: value = .null
            case .int64(let integer): value = column.type == .boolean ? .bool(integer != 0) : .number(Double(integer))
            case .double(let double): value = .number(double)
            case .string(let string): value = .string(string)
            case .blob(let data): value = .string(data.base64EncodedString())
            }
            fields.append(StoredItem.Field(name: column.name, value: value))
        }
        return StoredItem(
            id: row[0], createdAt: row[1], updatedAt: row[2], version: row[3], deleted: row[4], fields: fields)
    }
}
