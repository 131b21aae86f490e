/// How both stores keep ``SchemaChangeRecord``s: the table `__schema_changes`, whose key makes
/// a change applied once.
extension SchemaChangeRecord {
    /// `CREATE TABLE IF NOT EXISTS "__schema_changes" …` in `dialect`.
    static func createTableSQL(dialect: SQLDialect) -> String {
        let text = dialect.textColumn
        let integer = dialect.integerColumn
        return """
            CREATE TABLE IF NOT EXISTS "__schema_changes" (
                "tableName" \(text) NOT NULL, "columnName" \(text) NOT NULL, "kind" \(text) NOT NULL,
                "detail" \(text) NOT NULL, "fromType" \(text) NOT NULL, "appliedAt" \(integer) NOT NULL,
                "backfill" \(text) NOT NULL, "cursor" \(text), "stamped" \(integer) NOT NULL DEFAULT 0,
                PRIMARY KEY ("tableName", "columnName", "kind", "detail"))
            """
    }

    /// The columns of a select that ``init(_:)`` reads, in order.
    static let selectList =
        "\"tableName\", \"columnName\", \"kind\", \"detail\", \"fromType\", \"appliedAt\", \"backfill\", \"cursor\", \"stamped\""

    /// The select of every record, oldest first (in SQLite, records of one moment in the order
    /// they were inserted).
    static func selectSQL(dialect: SQLDialect) -> String {
        let ties = dialect == .sqlite ? "rowid" : "\"tableName\", \"columnName\", \"kind\""
        return "SELECT \(selectList) FROM \"__schema_changes\" ORDER BY \"appliedAt\", \(ties)"
    }

    /// The insert of this record, which leaves a record of the same change as it is.
    var insert: SQLStatement {
        let (state, cursor) = storedBackfill
        return SQLStatement(
            sql: "INSERT INTO \"__schema_changes\" (\(Self.selectList)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) "
                + "ON CONFLICT DO NOTHING",
            values: [
                .text(table), .text(column), .text(kind.rawValue), .text(detail), .text(from), .integer(appliedAt),
                .text(state), cursor.map(SQLValue.text) ?? .null,
            ])
    }

    /// The update that records a batch of this change's backfill: `count` more rows stamped, the
    /// cursor at `lastID` (left where it was when the batch stamped none), and done when the
    /// batch found fewer rows than its `limit`.
    func batchRecorded(count: Int, lastID: String?, limit: Int) -> SQLStatement {
        SQLStatement(
            sql: "UPDATE \"__schema_changes\" SET \"backfill\" = ?, \"cursor\" = ?, \"stamped\" = \"stamped\" + ? "
                + "WHERE \"tableName\" = ? AND \"columnName\" = ? AND \"kind\" = ? AND \"detail\" = ?",
            values: [
                .text(count < limit ? "done" : "pending"),
                (lastID ?? storedBackfill.cursor).map(SQLValue.text) ?? .null,
                .integer(Int64(count)), .text(table), .text(column), .text(kind.rawValue), .text(detail),
            ])
    }

    /// Its backfill as stored: the state's name and the cursor.
    var storedBackfill: (state: String, cursor: String?) {
        switch backfill {
        case .none: ("none", nil)
        case .pending(let after): ("pending", after)
        case .done: ("done", nil)
        }
    }

    /// A record read with ``selectList``; a kind or state this version does not know (a newer
    /// service wrote it) is refused, naming the kind.
    init(_ row: SQLRow) throws(TableError) {
        let kind = try row.text("kind")
        let state: Backfill? =
            switch try row.text("backfill") {
            case "none": Backfill.none
            case "pending": Backfill.pending(after: try row.optionalText("cursor"))
            case "done": Backfill.done
            default: nil
            }
        guard let known = Kind(rawValue: kind), let state else {
            throw .invalidRequest(
                "The database records a schema change this version does not know (\(kind)); "
                    + "run the newer todosync that made it.")
        }
        self.init(
            table: try row.text("tableName"), column: try row.text("columnName"), kind: known,
            detail: try row.text("detail"), from: try row.text("fromType"), appliedAt: try row.integer("appliedAt"),
            backfill: state, stamped: Int(try row.integer("stamped")))
    }
}

extension TableStorage {
    /// The schema changes applied from `--schema` files, oldest first, with their backfills' progress.
    func schemaChanges() async throws(TableError) -> [SchemaChangeRecord] {
        try await query(SQLStatement(sql: SchemaChangeRecord.selectSQL(dialect: dialect))).map(SchemaChangeRecord.init)
    }
}
