import Foundation
import GRDB
import Storage
import SyncProtocol

/// One item at a time: insert, update, soft delete and undelete, remove, each a check and a write
/// in one transaction (the check is ``WriteRule``'s), and the tables and columns a write creates.
extension SQLiteTableStore {
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
    static func checkColumns(_ db: Database, of schema: TableSchema) throws {
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

    func fetch(_ db: Database, _ schema: TableSchema, id: String, scope: RowScope = .all) throws -> StoredItem? {
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
    func keepOwners(_ db: Database, in table: String) throws {
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
    func ensureTable(_ db: Database, _ name: String) throws -> TableSchema {
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
    func ensureColumns(_ db: Database, _ schema: inout TableSchema, for fields: [StoredItem.Field]) throws {
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
}
