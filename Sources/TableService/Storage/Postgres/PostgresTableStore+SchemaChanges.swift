import PostgresNIO
import SyncProtocol

/// Schema changes of a `--schema` file in PostgreSQL. Applying them takes the schema advisory
/// lock and reads the records again inside it, so two instances starting with the same new file
/// apply it once (the second finds it recorded). Each backfill batch is one transaction: it locks
/// the change's record (instances take turns), takes the table's stamps as every write does (one
/// per row, in commit order), and moves the cursor with the rows.
extension PostgresTableStore {
    /// Plans `declarations` against the database and applies the plan in one transaction; a
    /// refused file changes nothing.
    func applySchemaChanges(_ declarations: [TableDeclaration]) async throws {
        guard !declarations.isEmpty else { return }
        let now = clock()
        try await pool.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
            let plan = try SchemaChangePlanner.plan(
                declarations, stored: try await Self.storedSchemas(of: declarations, connection, logger: self.logger),
                recorded: try await Self.records(connection, logger: self.logger), now: now)
            for statement in plan.statements {
                try await connection.query(statement.postgresQuery, logger: self.logger)
            }
        }
    }

    /// The stored tables that `declarations` name, by lower-cased name.
    private static func storedSchemas(
        of declarations: [TableDeclaration], _ connection: PostgresConnection, logger: Logger
    ) async throws -> [String: TableSchema] {
        var stored: [String: TableSchema] = [:]
        for declaration in declarations {
            if let schema = try await readSchema(of: declaration.name, connection, logger: logger) {
                stored[schema.name.lowercased()] = schema
            }
        }
        return stored
    }

    static func records(_ connection: PostgresConnection, logger: Logger) async throws -> [SchemaChangeRecord] {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: SchemaChangeRecord.selectSQL(dialect: .postgres)), logger: logger)
        var records: [SchemaChangeRecord] = []
        for try await row in rows { records.append(try SchemaChangeRecord(SQLRow(row))) }
        return records
    }

    var writesUnderWay: Int? { nil }

    /// One batch of `pass`: locks the table's change records (instances take turns, in key
    /// order), picks the next rows on the id keyset, takes their stamp as every write does (which
    /// holds the horizon, so every pull of the database, until the commit: hence batches sized by
    /// time; writers of other rows go on), and stamps them
    /// with one `UPDATE … FROM unnest(ids) WITH ORDINALITY` that checks the condition again: a
    /// writer may have given a row its value after the batch chose it, and that row is left as the
    /// writer left it.
    func backfillBatch(_ pass: BackfillPass, limit: Int) async throws(TableError) -> BackfillBatch {
        try await openedForRequest()
        guard let schema = try await knownSchema(of: pass.table) else { return BackfillBatch(rows: 0, held: .zero) }
        try await addBackfillMarker(to: schema.name)
        let result: (count: Int, last: ChangeCursor?)
        let started = ContinuousClock.now
        do {
            result = try await pool.withTransaction(logger: logger) { connection in
                let locked = try await Self.lockedRecords(of: pass.table, connection, logger: self.logger)
                let pending = pass.changes.compactMap { change in
                    locked.first { $0.isSameChange(as: change) && $0.isPending }
                }
                let current = BackfillPass(table: pass.table, changes: pending)
                guard !pending.isEmpty, let condition = current.condition(schema) else { return (0, nil) }
                let ids = try await self.nextIDs(current, condition, schema, limit: limit, connection)
                var last: ChangeCursor?
                if !ids.isEmpty {
                    // Registered as every write is (PostgresHorizon), and counted as a rewrite.
                    let stamps = try await connection.query(
                        "SELECT \"__todosync_stamp\"(\(self.givenClock?.stamp())::bigint)", logger: self.logger
                    ).collect()
                    guard let first = try stamps.first?.decode(Int64.self) else { return (0, nil) }
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: PostgresStatement.countRewrite(table: "$1"),
                            binds: PostgresStatement.bindings([.text(schema.name)])), logger: self.logger)
                    let stamped = try await connection.query(
                        Self.stampQuery(current, schema, ids: ids, first: first), logger: self.logger
                    ).collect()
                    for row in stamped {
                        let (updatedAt, id) = try row.decode((Int64, String).self)
                        let cursor = ChangeCursor(updatedAt: updatedAt, id: id)
                        if last.map({ $0 < cursor }) ?? true { last = cursor }
                    }
                }
                for change in pending {
                    let recorded = change.batchRecorded(count: ids.count, lastID: ids.last, limit: limit)
                    try await connection.query(recorded.postgresQuery, logger: self.logger)
                }
                return (ids.count, last)
            }
        } catch {
            throw Self.tableError(error)
        }
        // The whole transaction: pulls wait for its stamp (the horizon) from the statement that takes
        // it to the commit, and writers of its rows for their row locks.
        let held = ContinuousClock.now - started
        if let last = result.last { bus.committed(.init(table: pass.table, cursor: last, owner: nil)) }
        return BackfillBatch(rows: result.count, held: held)
    }

    /// The change records of `table`, locked until the transaction ends.
    private static func lockedRecords(
        of table: String, _ connection: PostgresConnection, logger: Logger
    ) async throws -> [SchemaChangeRecord] {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(SchemaChangeRecord.selectList) FROM \"__schema_changes\" WHERE \"tableName\" = $1 "
                    + "ORDER BY \"columnName\", \"kind\", \"detail\" FOR UPDATE",
                binds: PostgresStatement.bindings([.text(table)])), logger: logger)
        var records: [SchemaChangeRecord] = []
        for try await row in rows {
            // One this version does not know is left to the version that wrote it.
            do { records.append(try SchemaChangeRecord(SQLRow(row))) } catch is TableError { continue }
        }
        return records
    }

    /// The ids of the pass's next `limit` rows, in id order.
    private func nextIDs(
        _ pass: BackfillPass, _ condition: BackfillPass.Fragment, _ schema: TableSchema, limit: Int,
        _ connection: PostgresConnection
    ) async throws -> [String] {
        var statement = SQLStatement(
            sql: "SELECT \"id\" FROM \(SQLDialect.quoted(schema.name)) WHERE \(condition.sql)", values: condition.values
        )
        if let cursor = pass.cursor {
            statement.sql += " AND \"id\" > ?"
            statement.values.append(.text(cursor))
        }
        statement.sql += " ORDER BY \"id\" LIMIT ?"
        statement.values.append(.integer(Int64(limit)))
        let rows = try await connection.query(statement.postgresQuery, logger: logger).collect()
        return try rows.map { try $0.decode(String.self) }
    }

    /// The pass's ``BackfillPass/stampUpdate(_:in:rows:match:first:)`` of the rows `ids`, in order.
    private static func stampQuery(
        _ pass: BackfillPass, _ schema: TableSchema, ids: [String], first: Int64
    ) -> PostgresQuery {
        let table = SQLDialect.quoted(schema.name)
        // The condition again (qualified): a writer may have changed the row since it was chosen.
        let condition = pass.condition(schema, qualifier: "\(table).") ?? .init(sql: "FALSE", values: [])
        let update = pass.stampUpdate(
            schema, in: .postgres, rows: "unnest(?::text[]) WITH ORDINALITY AS \"b\"(\"id\", \"n\")",
            match: "\(table).\"id\" = \"b\".\"id\" AND \(condition.sql)", first: first)
        var binds = PostgresStatement.bindings(update.values)
        binds.append(ids)
        PostgresStatement.append(condition.values, to: &binds)
        return PostgresQuery(
            unsafeSQL: SQLDialect.postgres.numberingPlaceholders(update.sql)
                + " RETURNING \(table).\"updatedAt\", \(table).\"id\"",
            binds: binds)
    }

    /// What `declarations` would change in the database at `location`, read without changing it.
    static func planSchemaChanges(
        location: PostgresLocation, declarations: [TableDeclaration], logger: Logger
    ) async throws(TableServiceError) -> SchemaChangeReport {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: logger)
            do {
                let report = try await plan(declarations, connection, logger: logger)
                try? await connection.close()
                return report
            } catch {
                try? await connection.close()
                throw error
            }
        } catch let error as ServiceSchemaError {
            throw .invalidConfiguration(error.description)
        } catch {
            throw .cannotOpenDatabase("PostgreSQL at \(location.displayURL) cannot be read: \(describe(error))")
        }
    }

    private static func plan(
        _ declarations: [TableDeclaration], _ connection: PostgresConnection, logger: Logger
    ) async throws -> SchemaChangeReport {
        func exists(_ table: String) async throws -> Bool {
            let rows = try await connection.query("SELECT to_regclass(\(table)) IS NOT NULL", logger: logger)
                .collect()
            return try rows.first?.decode(Bool.self) ?? false
        }
        let stored =
            try await exists("\"__tables\"")
            ? try await storedSchemas(of: declarations, connection, logger: logger) : [:]
        let recorded = try await exists("\"__schema_changes\"") ? try await records(connection, logger: logger) : []
        let plan = try SchemaChangePlanner.plan(declarations, stored: stored, recorded: recorded, now: 0)
        var counts: [Int] = []
        for change in plan.changes {
            guard let sql = SchemaChangePlanner.backfillCountSQL(change, in: stored[change.table.lowercased()]) else {
                counts.append(0)
                continue
            }
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
            counts.append(try rows.first?.decode(Int.self) ?? 0)
        }
        return SchemaChangeReport(plan) { counts[$0] }
    }

    /// Adds the hidden ``BackfillMarker/column`` to `table` once per process (under the schema
    /// lock, as other column changes).
    private func addBackfillMarker(to table: String) async throws(TableError) {
        guard !markedTables.withLock({ $0.contains(table) }) else { return }
        do {
            try await pool.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "ALTER TABLE \(SQLDialect.quoted(table)) ADD COLUMN IF NOT EXISTS "
                            + "\(SQLDialect.quoted(BackfillMarker.column)) text"), logger: self.logger)
            }
        } catch {
            throw Self.tableError(error)
        }
        markedTables.withLock { _ = $0.insert(table) }
    }

    /// The version `current` had before backfills stamped it, when no one wrote it since (read
    /// through `to_jsonb` so that a table without the marker column answers nil).
    func versionBeforeBackfill(in table: String, _ current: StoredItem) async throws(TableError) -> String? {
        var statement = PostgresStatement()
        let quoted = SQLDialect.quoted(table)
        statement.sql =
            "SELECT to_jsonb(\(quoted).*) ->> '\(BackfillMarker.column)' FROM \(quoted) "
            + "WHERE \"id\" = \(statement.bind(.text(current.id)))"
        let markers = try await values(statement) { row in try row.decode(String?.self) }
        return BackfillMarker(markers.first ?? nil)?.versionBefore(rowUpdatedAt: current.updatedAt)
    }
}
