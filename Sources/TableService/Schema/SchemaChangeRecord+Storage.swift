/// How both stores keep ``SchemaChangeRecord``s: the table `__schema_changes`, whose key makes
/// a change applied once.
extension SchemaChangeRecord {
    /// `CREATE TABLE IF NOT EXISTS "__schema_changes" …` in `dialect`.
    static func createTableSQL(dialect: SQLDialect) -> String {
        let text = dialect == .postgres ? "text COLLATE \"C\"" : "TEXT"
        let integer = dialect == .postgres ? "bigint" : "INTEGER"
        return """
            CREATE TABLE IF NOT EXISTS "__schema_changes" (
                "tableName" \(text) NOT NULL, "columnName" \(text) NOT NULL, "kind" \(text) NOT NULL,
                "detail" \(text) NOT NULL, "fromType" \(text) NOT NULL, "appliedAt" \(integer) NOT NULL,
                "backfill" \(text) NOT NULL, "cursor" \(text), "stamped" \(integer) NOT NULL DEFAULT 0,
                PRIMARY KEY ("tableName", "columnName", "kind", "detail"))
            """
    }

    /// The columns of a select that ``init(columns:)`` reads, in order.
    static let selectList =
        "\"tableName\", \"columnName\", \"kind\", \"detail\", \"fromType\", \"appliedAt\", \"backfill\", \"cursor\", \"stamped\""

    /// Its backfill as stored: the state's name and the cursor.
    var storedBackfill: (state: String, cursor: String?) {
        switch backfill {
        case .none: ("none", nil)
        case .pending(let after): ("pending", after)
        case .done: ("done", nil)
        }
    }

    /// A record read back; a kind or state this version does not know (a newer service wrote it)
    /// is refused, naming the kind.
    init(
        table: String, column: String, kind: String, detail: String, from: String, appliedAt: Int64,
        backfill: String, cursor: String?, stamped: Int64
    ) throws(TableError) {
        let state: Backfill? =
            switch backfill {
            case "none": Backfill.none
            case "pending": Backfill.pending(after: cursor)
            case "done": Backfill.done
            default: nil
            }
        guard let known = Kind(rawValue: kind), let state else {
            throw .invalidRequest(
                "The database records a schema change this version does not know (\(kind)); "
                    + "run the newer todosync that made it.")
        }
        self.init(
            table: table, column: column, kind: known, detail: detail, from: from, appliedAt: appliedAt,
            backfill: state, stamped: Int(stamped))
    }
}
