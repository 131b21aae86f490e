import Logging
import PostgresNIO
import SyncProtocol

/// Tables and columns in PostgreSQL, changed safely by several instances at once.
///
/// `__tables` holds each table's name (databases made before the horizon also have its last stamp
/// and count of rewrites there, unused); `__rewrites` its count of rewrites (``PageCursors``);
/// `__columns` the user columns in the
/// order they were added, with the type their first non-null value gave them. A column that has
/// held only nulls is `text` until its first value retypes it. Every change takes the advisory
/// lock ``PostgresTableStore/schemaLockKey`` and then an exclusive lock of the table, reads the
/// schema again, and does only what is still missing: two instances adding the same column
/// one after the other leave one column, and a write waits for a change in progress.
extension PostgresTableStore {
    /// Creates the fleet's tables (``FleetTables``) and moves the rows of the installation registry
    /// they replaced, left by an earlier version.
    private func prepareFleetTables(_ connection: PostgresConnection) async throws {
        for sql in FleetTables.createSQL(dialect: .postgres) {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
        let registry = try await connection.query(
            PostgresQuery(unsafeSQL: FleetTables.installationsTableSQL(dialect: .postgres)), logger: logger
        ).collect()
        guard try registry.first.map(SQLRow.init)?.integer("count") ?? 0 > 0 else { return }
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: FleetTables.installationsSQL(dialect: .postgres)), logger: logger
        ).collect().map(SQLRow.init)
        for statement in try FleetTables.moveInstallations(rows, dialect: .postgres) {
            try await connection.query(statement.postgresQuery, logger: logger)
        }
    }

    /// Creates the metadata tables (if missing), `tables` and `ownedTables` (which keep an owner
    /// per row), and loads every schema.
    func prepare(tables: [String], ownedTables: [String], declarations: [TableDeclaration] = []) async throws {
        try await pool.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS "__tables" (
                    "name" text COLLATE "C" NOT NULL PRIMARY KEY, "createdAt" bigint NOT NULL)
                """, logger: self.logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS "__columns" (
                    "tableName" text COLLATE "C" NOT NULL, "name" text COLLATE "C" NOT NULL, "type" text NOT NULL,
                    "position" integer NOT NULL, PRIMARY KEY ("tableName", "name"))
                """, logger: self.logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: SchemaChangeRecord.createTableSQL(dialect: .postgres)), logger: self.logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS "__rewrites" (
                    "name" text COLLATE "C" NOT NULL, "stripe" integer NOT NULL, "count" bigint NOT NULL,
                    PRIMARY KEY ("name", "stripe"))
                """, logger: self.logger)
            try await self.prepareFleetTables(connection)
            let epoch = try await self.prepareEpoch(connection)
            self.currentEpoch.withLock { $0 = epoch }
            for function in PostgresHorizon.functionsSQL {
                try await connection.query(PostgresQuery(unsafeSQL: function), logger: self.logger)
            }
            // Databases written before the horizon: their tables announced each write from a
            // trigger, in the writer's transaction (the bus does it after the commit now).
            let existing = try await connection.query("SELECT \"name\" FROM \"__tables\"", logger: self.logger)
            var names: [String] = []
            for try await name in existing.decode(String.self) { names.append(name) }
            for name in names {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP TRIGGER IF EXISTS \"__changed\" ON \(SQLDialect.quoted(name))"),
                    logger: self.logger)
            }
            for function in ["__todosync_changed", "__todosync_owned_changed"] {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP FUNCTION IF EXISTS \"\(function)\"()"), logger: self.logger)
            }
        }
        // Renames and records before the declared columns are made (a renamed column's new name
        // must not exist yet).
        try await applySchemaChanges(declarations)
        for table in tables + ownedTables {
            try await createTable(table, waitingForOpen: false)
        }
        for table in ownedTables {
            try await keepOwners(in: table)
        }
        for declaration in declarations {
            let schema = try await createTable(declaration.name, waitingForOpen: false)
            try declaration.checkFits(schema)
            _ = try await ensureColumns(schema, for: declaration.typeWitnesses, waitingForOpen: false)
        }
        let names = try await pool.rows("SELECT \"name\" FROM \"__tables\"", logger: logger)
        for name in names {
            let schema = try await pool.withConnection { connection in
                try await Self.readSchema(of: try name.decode(String.self), connection, logger: self.logger)
            }
            if let schema { registry.store(schema) }
        }
    }

    func reloadSchema(of table: String) async throws(TableError) -> TableSchema? {
        try await openedForRequest()
        do {
            let schema = try await pool.withConnection { connection in
                try await Self.readSchema(of: table, connection, logger: self.logger)
            }
            return schema.map { registry.store($0) }
        } catch {
            throw Self.tableError(error)
        }
    }

    /// Reads every table's schema again.
    func reloadAllSchemas() async throws(TableError) {
        let names = try await values(PostgresStatement(sql: "SELECT \"name\" FROM \"__tables\"")) { row in
            try row.decode(String.self)
        }
        for name in names { _ = try await reloadSchema(of: name) }
    }

    /// The schema of `table` (any letter case) as the metadata tables hold it, `nil` if missing.
    static func readSchema(
        of table: String, _ connection: PostgresConnection, logger: Logger
    ) async throws
        -> TableSchema?
    {
        let names = try await connection.query(
            "SELECT \"name\" FROM \"__tables\" WHERE lower(\"name\") = lower(\(table))", logger: logger
        ).collect()
        guard let name = try names.first?.decode(String.self) else { return nil }
        let rows = try await connection.query(
            "SELECT \"name\", \"type\" FROM \"__columns\" WHERE \"tableName\" = \(name) ORDER BY \"position\"",
            logger: logger)
        var columns: [Column] = []
        for try await (column, type) in rows.decode((String, String).self) {
            columns.append(Column(name: column, type: ColumnType(rawValue: type) ?? .unknown, isSystem: false))
        }
        return TableSchema(name: name, userColumns: columns)
    }

    /// The schema of `table` for a write, creating the table if no instance has yet.
    func tableForWriting(_ table: String) async throws(TableError) -> TableSchema {
        if let schema = registry.schema(of: table) { return schema }
        if let schema = try await reloadSchema(of: table) { return schema }
        return try await createTable(table, waitingForOpen: true)
    }

    /// Creates `table` unless it exists; its schema either way.
    @discardableResult
    func createTable(_ table: String, waitingForOpen: Bool) async throws(TableError) -> TableSchema {
        guard table.utf8.count <= Self.maximumIdentifierLength else {
            throw .invalidRequest(
                "The table name '\(table)' is longer than PostgreSQL allows (\(Self.maximumIdentifierLength) bytes).")
        }
        let created = clock()
        let schema = try await changingSchema(of: table, waitingForOpen: waitingForOpen) { connection, existing in
            if let existing { return existing }
            let quoted = SQLDialect.quoted(table)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TABLE \(quoted) (
                            "id" text COLLATE "C" NOT NULL PRIMARY KEY, "createdAt" bigint NOT NULL,
                            "updatedAt" bigint NOT NULL, "version" text NOT NULL, "deleted" boolean NOT NULL DEFAULT FALSE)
                        """), logger: self.logger)
            for columns in ["\"updatedAt\", \"id\"", "\"createdAt\", \"id\""] {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "CREATE INDEX ON \(quoted) (\(columns))"), logger: self.logger)
            }
            try await connection.query(
                "INSERT INTO \"__tables\" (\"name\", \"createdAt\") VALUES (\(table), \(created))", logger: self.logger)
            return TableSchema(name: table)
        }
        return schema
    }

    /// Makes `table` keep an owner per row: the hidden owner column (not in `__columns`, and
    /// skipped when rows are read) and an index for the owner's pulls.
    func keepOwners(in table: String) async throws(TableError) {
        let owner = SQLDialect.quoted(RowScope.ownerColumn)
        _ = try await changingSchema(of: table, waitingForOpen: false) { connection, existing in
            guard let existing else { throw TableError.tableNotFound(table) }
            let quoted = SQLDialect.quoted(existing.name)
            try await connection.query(
                PostgresQuery(unsafeSQL: "ALTER TABLE \(quoted) ADD COLUMN IF NOT EXISTS \(owner) text COLLATE \"C\""),
                logger: self.logger)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "CREATE INDEX IF NOT EXISTS \(SQLDialect.quoted(existing.name + "__owner")) "
                        + "ON \(quoted) (\(owner), \"updatedAt\", \"id\")"), logger: self.logger)
            return existing
        }
    }

    /// Adds the columns `fields` need and types all-null columns; the schema afterwards. Nothing
    /// is locked when this instance already knows every column and type.
    func ensureColumns(
        _ schema: TableSchema, for fields: [StoredItem.Field], waitingForOpen: Bool = true
    ) async throws(TableError)
        -> TableSchema
    {
        guard try !schema.changes(for: fields).isEmpty else { return schema }
        for field in fields where field.name.utf8.count > Self.maximumIdentifierLength {
            throw .invalidRequest(
                "The property name '\(field.name)' is longer than PostgreSQL allows for a column "
                    + "(\(Self.maximumIdentifierLength) bytes); use a shorter name.")
        }
        return try await changingSchema(of: schema.name, waitingForOpen: waitingForOpen) { connection, existing in
            guard var current = existing else { throw TableError.tableNotFound(schema.name) }
            let table = SQLDialect.quoted(current.name)
            for change in try current.changes(for: fields) {
                switch change {
                case .add(let name, let type):
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(SQLDialect.quoted(name)) "
                                + Self.columnType(type)), logger: self.logger)
                    try await connection.query(
                        """
                        INSERT INTO "__columns" ("tableName", "name", "type", "position")
                        VALUES (\(current.name), \(name), \(type.rawValue), \(current.columns.count))
                        """, logger: self.logger)
                case .setType(let name, let type):
                    // Only nulls so far: nothing to convert.
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "ALTER TABLE \(table) ALTER COLUMN \(SQLDialect.quoted(name)) "
                                + "TYPE \(Self.columnType(type)) USING NULL"), logger: self.logger)
                    try await connection.query(
                        """
                        UPDATE "__columns" SET "type" = \(type.rawValue)
                        WHERE "tableName" = \(current.name) AND "name" = \(name)
                        """, logger: self.logger)
                }
                current.apply([change])
            }
            return current
        }
    }

    /// Runs `change` in a transaction holding the schema lock and (when the table exists) an
    /// exclusive lock of the table, with the table's schema as it is now; publishes the result.
    private func changingSchema(
        of table: String, waitingForOpen: Bool,
        _ change: @escaping @Sendable (PostgresConnection, TableSchema?) async throws -> TableSchema
    ) async throws(TableError) -> TableSchema {
        if waitingForOpen { try await openedForRequest() }
        do {
            let schema = try await pool.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
                let existing = try await Self.readSchema(of: table, connection, logger: self.logger)
                if let existing {
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "LOCK TABLE \(SQLDialect.quoted(existing.name)) IN ACCESS EXCLUSIVE MODE"),
                        logger: self.logger)
                }
                return try await change(connection, existing)
            }
            return registry.store(schema)
        } catch {
            throw Self.tableError(error)
        }
    }

    /// The PostgreSQL type of a column.
    static func columnType(_ type: ColumnType) -> String {
        switch type {
        case .string, .unknown: "text COLLATE \"C\""
        case .number: "double precision"
        case .boolean: "boolean"
        case .date: "bigint"
        }
    }
}

extension PostgresStatement {
    init(sql: String) {
        self.init()
        self.sql = sql
    }
}
