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
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
            var stored: [String: TableSchema] = [:]
            for declaration in declarations {
                guard let schema = try await Self.readSchema(of: declaration.name, connection, logger: self.logger)
                else { continue }
                try declaration.checkFits(schema)
                stored[schema.name.lowercased()] = schema
            }
            let plan = try SchemaChangePlanner.plan(
                declarations, stored: stored, recorded: try await Self.records(connection, logger: self.logger),
                now: now)
            for rename in plan.renames {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "ALTER TABLE \(SQLDialect.quoted(rename.table)) RENAME COLUMN "
                            + "\(SQLDialect.quoted(rename.from)) TO \(SQLDialect.quoted(rename.to))"),
                    logger: self.logger)
                try await connection.query(
                    """
                    UPDATE "__columns" SET "name" = \(rename.to)
                    WHERE "tableName" = \(rename.table) AND "name" = \(rename.from)
                    """, logger: self.logger)
            }
            for retirement in plan.retirements {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "ALTER TABLE \(SQLDialect.quoted(retirement.table)) RENAME COLUMN "
                            + "\(SQLDialect.quoted(retirement.column)) TO "
                            + SQLDialect.quoted(SchemaChangePlanner.retiredPrefix + retirement.column)),
                    logger: self.logger)
                try await connection.query(
                    """
                    DELETE FROM "__columns" WHERE "tableName" = \(retirement.table) AND "name" = \(retirement.column)
                    """, logger: self.logger)
            }
            for change in plan.changes {
                let backfill = change.storedBackfill
                try await connection.query(
                    """
                    INSERT INTO "__schema_changes" ("tableName", "columnName", "kind", "detail", "fromType",
                        "appliedAt", "backfill", "cursor")
                    VALUES (\(change.table), \(change.column), \(change.kind.rawValue), \(change.detail),
                        \(change.from), \(change.appliedAt), \(backfill.state), \(backfill.cursor))
                    ON CONFLICT DO NOTHING
                    """, logger: self.logger)
            }
        }
    }

    func schemaChanges() async throws(TableError) -> [SchemaChangeRecord] {
        try await openedForRequest()
        do {
            return try await client.withConnection { connection in
                try await Self.records(connection, logger: self.logger)
            }
        } catch {
            throw Self.tableError(error)
        }
    }

    static func records(_ connection: PostgresConnection, logger: Logger) async throws -> [SchemaChangeRecord] {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(SchemaChangeRecord.selectList) FROM \"__schema_changes\" "
                    + "ORDER BY \"appliedAt\", \"tableName\", \"columnName\", \"kind\""), logger: logger)
        var records: [SchemaChangeRecord] = []
        for try await row in rows {
            let (table, column, kind, detail, from, appliedAt, backfill, cursor, stamped) = try row.decode(
                (String, String, String, String, String, Int64, String, String?, Int64).self)
            guard
                let record = SchemaChangeRecord(
                    table: table, column: column, kind: kind, detail: detail, from: from, appliedAt: appliedAt,
                    backfill: backfill, cursor: cursor, stamped: stamped)
            else {
                throw TableError.invalidRequest(
                    "The database records a schema change this version does not know (\(kind)); "
                        + "run the newer todosync that made it.")
            }
            records.append(record)
        }
        return records
    }

    func backfillBatch(_ change: SchemaChangeRecord, limit: Int) async throws(TableError) -> Int {
        try await openedForRequest()
        guard let rowChange = change.rowChange, let schema = try await knownSchema(of: change.table),
            let column = schema.column(named: change.column)
        else { return 0 }
        let table = SQLDialect.quoted(schema.name)
        let quoted = SQLDialect.quoted(column.name)
        let marker = SQLDialect.quoted(BackfillMarker.column)
        try await addBackfillMarker(to: schema.name)
        let clock = clock()
        let result: (count: Int, last: ChangeCursor?)
        do {
            result = try await client.withTransaction(logger: logger) { connection in
                let states = try await connection.query(
                    """
                    SELECT "backfill", "cursor" FROM "__schema_changes" WHERE "tableName" = \(change.table)
                    AND "columnName" = \(change.column) AND "kind" = \(change.kind.rawValue)
                    AND "detail" = \(change.detail) FOR UPDATE
                    """, logger: self.logger
                ).collect()
                guard let state = states.first, try state.decode((String, String?).self).0 == "pending" else {
                    return (0, nil)
                }
                let cursor = try state.decode((String, String?).self).1 ?? ""
                var select = PostgresBindings()
                select.append(cursor)
                select.append(Int64(limit))
                let idRows = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT \"id\" FROM \(table) WHERE \"id\" > $1 AND \(rowChange.condition(quoted)) "
                            + "ORDER BY \"id\" LIMIT $2", binds: select), logger: self.logger
                ).collect()
                let ids = try idRows.map { try $0.decode(String.self) }
                var last: ChangeCursor?
                if !ids.isEmpty {
                    let count = Int64(ids.count)
                    let stamps = try await connection.query(
                        """
                        UPDATE "__tables" SET "stamp" = greatest("stamp" + \(count), \(clock) + \(count) - 1),
                        "rewrites" = "rewrites" + 1 WHERE "name" = \(schema.name) RETURNING "stamp"
                        """, logger: self.logger
                    ).collect()
                    guard let lastStamp = try stamps.first?.decode(Int64.self) else { return (0, nil) }
                    let first = lastStamp - count + 1
                    var binds = PostgresBindings()
                    binds.append(ids)
                    binds.append(first)
                    // The marker keeps the version before the first backfill while no one writes the row.
                    let stamp = "($2 + b.n - 1)"
                    let before =
                        "CASE WHEN split_part(\(table).\(marker), ' ', 1) = \(table).\"updatedAt\"::text "
                        + "THEN substr(\(table).\(marker), strpos(\(table).\(marker), ' ') + 1) "
                        + "ELSE \(table).\"version\" END"
                    var assignments =
                        "\"updatedAt\" = \(stamp), \"version\" = encode(int8send(\(stamp)::bigint), 'base64'), "
                        + "\(marker) = \(stamp)::text || ' ' || \(before)"
                    if case .fill(let value) = rowChange {
                        switch SQLValue(value) {
                        case .null: binds.appendNull()
                        case .integer(let integer): binds.append(integer)
                        case .double(let double): binds.append(double)
                        case .text(let text): binds.append(text)
                        case .bool(let bool): binds.append(bool)
                        }
                        assignments = "\(quoted) = $3, " + assignments
                    } else if let assignment = rowChange.assignment(quoted) {
                        assignments = assignment + ", " + assignments
                    }
                    try await connection.query(
                        PostgresQuery(
                            // The condition again: a writer may have given the row a value since it was chosen.
                            unsafeSQL: "UPDATE \(table) SET \(assignments) FROM unnest($1::text[]) WITH ORDINALITY "
                                + "AS b(id, n) WHERE \(table).\"id\" = b.id AND \(rowChange.condition("\(table).\(quoted)"))",
                            binds: binds), logger: self.logger)
                    last = ChangeCursor(updatedAt: lastStamp, id: ids.last!)
                }
                let done = ids.count < limit ? "done" : "pending"
                let newCursor = ids.last ?? cursor
                try await connection.query(
                    """
                    UPDATE "__schema_changes" SET "backfill" = \(done), "cursor" = \(newCursor),
                    "stamped" = "stamped" + \(Int64(ids.count)) WHERE "tableName" = \(change.table)
                    AND "columnName" = \(change.column) AND "kind" = \(change.kind.rawValue)
                    AND "detail" = \(change.detail)
                    """, logger: self.logger)
                return (ids.count, last)
            }
        } catch {
            throw Self.tableError(error)
        }
        if let last = result.last { changes.published(.init(table: change.table, cursor: last, owner: nil)) }
        return result.count
    }

    /// What `declarations` would change in the database at `location`, read without changing it.
    static func planSchemaChanges(
        location: PostgresLocation, declarations: [TableDeclaration], logger: Logger
    ) async throws(TableServiceError) -> SchemaChangeReport {
        let client = PostgresClient(configuration: clientConfiguration(location), backgroundLogger: logger)
        do {
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                return try await client.withConnection { connection in
                    try await plan(declarations, connection, logger: logger)
                }
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
        var stored: [String: TableSchema] = [:]
        if try await exists("\"__tables\"") {
            for declaration in declarations {
                guard let schema = try await readSchema(of: declaration.name, connection, logger: logger) else {
                    continue
                }
                try declaration.checkFits(schema)
                stored[schema.name.lowercased()] = schema
            }
        }
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
            try await client.withTransaction(logger: logger) { connection in
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
