import GRDB
import SyncProtocol

/// What keeps a table's lists flat in cost as it grows: row counts kept by triggers, an index per
/// boolean column, and a trigram full-text index of its text columns (``SearchIndex``). Triggers
/// keep the counts in step with the table inside the very transaction that changes a row, whoever
/// writes it (a local edit, a pull, a conflict's resolution, a purge).
extension LocalStore {
    /// The boolean columns whose true rows are counted and indexed (`complete`).
    static func flagColumns(_ table: TableDescription) -> [String] {
        table.columns.filter { $0.type == .boolean }.map(\.name)
    }

    static let countsTable = """
        CREATE TABLE IF NOT EXISTS __rowCounts (
            tableName TEXT NOT NULL, columnName TEXT NOT NULL, rows INTEGER NOT NULL,
            PRIMARY KEY (tableName, columnName)
        ) WITHOUT ROWID
        """

    /// Creates what is missing of the counts and their triggers (filled from the rows already
    /// stored) and of the search index.
    static func createListSupport(_ table: TableDescription, in db: Database) throws {
        let name = table.name.quotedDatabaseIdentifier
        let flags = flagColumns(table)
        try db.execute(sql: countsTable)
        for flag in flags {
            try db.execute(
                sql: "CREATE INDEX IF NOT EXISTS \("\(table.name)__\(flag)".quotedDatabaseIdentifier) ON \(name) "
                    + "(coalesce(\(flag.quotedDatabaseIdentifier), 0))")
        }
        let hasCounts =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM __rowCounts WHERE tableName = ?)", arguments: [table.name])
            ?? false
        if !hasCounts {
            try db.execute(
                sql: "INSERT INTO __rowCounts (tableName, columnName, rows) SELECT ?, '', count(*) FROM \(name)",
                arguments: [table.name])
            for flag in flags {
                try db.execute(
                    sql: "INSERT INTO __rowCounts (tableName, columnName, rows) SELECT ?, ?, count(*) FROM \(name) "
                        + "WHERE coalesce(\(flag.quotedDatabaseIdentifier), 0) = 1",
                    arguments: [table.name, flag])
            }
        }
        try createCountTriggers(table, flags: flags, in: db)
        try SearchIndex(table)?.create(in: db)
    }

    private static func createCountTriggers(_ table: TableDescription, flags: [String], in db: Database) throws {
        let name = table.name.quotedDatabaseIdentifier
        let key = table.name.replacingOccurrences(of: "'", with: "''")
        func bump(_ column: String, by delta: String) -> String {
            "UPDATE __rowCounts SET rows = rows \(delta) WHERE tableName = '\(key)' AND columnName = '\(column)';"
        }
        let onInsert =
            [bump("", by: "+ 1")]
            + flags.map { flag in
                "UPDATE __rowCounts SET rows = rows + 1 WHERE tableName = '\(key)' AND columnName = '\(flag)' "
                    + "AND coalesce(new.\(flag.quotedDatabaseIdentifier), 0) = 1;"
            }
        let onDelete =
            [bump("", by: "- 1")]
            + flags.map { flag in
                "UPDATE __rowCounts SET rows = rows - 1 WHERE tableName = '\(key)' AND columnName = '\(flag)' "
                    + "AND coalesce(old.\(flag.quotedDatabaseIdentifier), 0) = 1;"
            }
        try db.execute(
            sql: "CREATE TRIGGER IF NOT EXISTS \("\(table.name)__count_insert".quotedDatabaseIdentifier) "
                + "AFTER INSERT ON \(name) BEGIN \(onInsert.joined(separator: " ")) END")
        try db.execute(
            sql: "CREATE TRIGGER IF NOT EXISTS \("\(table.name)__count_delete".quotedDatabaseIdentifier) "
                + "AFTER DELETE ON \(name) BEGIN \(onDelete.joined(separator: " ")) END")
        for flag in flags {
            let column = flag.quotedDatabaseIdentifier
            try db.execute(
                sql: "CREATE TRIGGER IF NOT EXISTS \("\(table.name)__count_\(flag)".quotedDatabaseIdentifier) "
                    + "AFTER UPDATE OF \(column) ON \(name) "
                    + "WHEN coalesce(old.\(column), 0) != coalesce(new.\(column), 0) BEGIN "
                    + "UPDATE __rowCounts SET rows = rows + (CASE WHEN coalesce(new.\(column), 0) = 1 THEN 1 ELSE -1 END) "
                    + "WHERE tableName = '\(key)' AND columnName = '\(flag)'; END")
        }
    }
}
