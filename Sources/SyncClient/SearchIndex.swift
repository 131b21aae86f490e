import GRDB

/// The trigram full-text index of a table's text columns, which bulk writes leave behind and
/// which catches up after them.
///
/// The index (an external-content FTS5 table, `todoitem__search`) holds exactly the rows whose
/// rowid is at most the table's mark in `__searchProgress`, with their current text:
///
/// - triggers re-index such a row when its text changes and remove it when it is deleted, in the
///   transaction that changes the row (whoever writes it);
/// - a row past the mark (new rows: rowids grow) is indexed by ``catchUp(_:limit:)``, which moves
///   the mark. Local edits catch up in their own transaction; a pull leaves its rows to the
///   ``SearchIndexer`` that runs after it, so pulled pages pay nothing for the index;
/// - a search reads the index up to the mark and scans the rows past it (``scanCondition``), so it
///   finds every row at any moment, however far the index is behind.
///
/// Rows keep their rowid when changed (writes are upserts), so a changed row never moves past the mark.
struct SearchIndex: Sendable {
    /// The table indexed.
    let table: String
    /// The columns indexed: the table's text columns.
    let columns: [String]

    /// The index of `table`, nil when it has no text column.
    init?(_ table: TableDescription) {
        let columns = table.columns.filter { $0.type == .text }.map(\.name)
        guard !columns.isEmpty else { return nil }
        self.table = table.name
        self.columns = columns
    }

    /// The FTS5 table (`todoitem__search`).
    var ftsTable: String { table + "__search" }

    static let progressTable = """
        CREATE TABLE IF NOT EXISTS __searchProgress (
            tableName TEXT PRIMARY KEY NOT NULL, indexedThrough INTEGER NOT NULL
        ) WITHOUT ROWID
        """

    /// Creates the index, its triggers and its mark where missing. A new index starts empty at mark
    /// 0 (the rows already stored are caught up like pulled ones). An index made by an older
    /// todosync, which indexed every row by trigger, is complete: its mark is the table's last
    /// rowid, and its triggers are replaced by ones that leave rows past the mark alone.
    func create(in db: Database) throws {
        try db.execute(sql: Self.progressTable)
        let hasMark =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM __searchProgress WHERE tableName = ?)", arguments: [table])
            ?? false
        if hasMark { return }
        let name = table.quotedDatabaseIdentifier
        let quoted = columns.map(\.quotedDatabaseIdentifier)
        let fts = ftsTable.quotedDatabaseIdentifier
        var mark: Int64 = 0
        if try db.tableExists(ftsTable) {
            mark = try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM \(name)") ?? 0
        } else {
            try db.execute(
                sql: "CREATE VIRTUAL TABLE \(fts) USING fts5(" + quoted.joined(separator: ", ")
                    + ", content=\(name), content_rowid='rowid', tokenize='trigram case_sensitive 0')")
        }
        try db.execute(
            sql: "INSERT INTO __searchProgress (tableName, indexedThrough) VALUES (?, ?)", arguments: [table, mark])

        let list = quoted.joined(separator: ", ")
        let newValues = quoted.map { "new.\($0)" }.joined(separator: ", ")
        let oldValues = quoted.map { "old.\($0)" }.joined(separator: ", ")
        let insert = "INSERT INTO \(fts) (rowid, \(list)) VALUES (new.rowid, \(newValues));"
        let remove = "INSERT INTO \(fts) (\(fts), rowid, \(list)) VALUES ('delete', old.rowid, \(oldValues));"
        let key = table.replacingOccurrences(of: "'", with: "''")
        let indexed = "(SELECT indexedThrough FROM __searchProgress WHERE tableName = '\(key)')"
        let triggers = [
            ("insert", "AFTER INSERT ON \(name) WHEN new.rowid <= \(indexed) BEGIN \(insert) END"),
            ("delete", "AFTER DELETE ON \(name) WHEN old.rowid <= \(indexed) BEGIN \(remove) END"),
            ("update", "AFTER UPDATE OF \(list) ON \(name) WHEN old.rowid <= \(indexed) BEGIN \(remove) \(insert) END"),
        ]
        for (event, body) in triggers {
            let trigger = "\(table)__search_\(event)".quotedDatabaseIdentifier
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(trigger)")
            try db.execute(sql: "CREATE TRIGGER \(trigger) \(body)")
        }
    }

    /// The mark: rows up to this rowid are in the index.
    func mark(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT indexedThrough FROM __searchProgress WHERE tableName = ?"),
            arguments: [table]) ?? 0
    }

    /// Indexes up to `limit` rows past the mark, oldest first, and moves the mark past them, in the
    /// caller's transaction. Returns how many rows it indexed: 0 when the index has caught up.
    @discardableResult
    func catchUp(_ db: Database, limit: Int) throws -> Int {
        let from = try mark(db)
        let name = table.quotedDatabaseIdentifier
        guard
            let tail = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT count(*), max(rowid) FROM "
                        + "(SELECT rowid FROM \(name) WHERE rowid > ? ORDER BY rowid LIMIT ?)"),
                arguments: [from, limit]),
            let through = tail[1] as Int64?
        else { return 0 }
        let list = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        try db.cachedStatement(
            sql: "INSERT INTO \(ftsTable.quotedDatabaseIdentifier) (rowid, \(list)) "
                + "SELECT rowid, \(list) FROM \(name) WHERE rowid > ? AND rowid <= ?"
        ).execute(arguments: [from, through])
        try db.cachedStatement(sql: "UPDATE __searchProgress SET indexedThrough = ? WHERE tableName = ?")
            .execute(arguments: [through, table])
        return tail[0]
    }

    /// Rows whose text contains the search, ignoring (ASCII) case, judged row by row: for the rows
    /// past the mark, and for searches shorter than a trigram. One argument per column, each the
    /// search text.
    var scanCondition: String {
        let name = table.quotedDatabaseIdentifier
        return "("
            + columns.map { "instr(lower(\(name).\($0.quotedDatabaseIdentifier)), lower(?)) > 0" }
            .joined(separator: " OR ") + ")"
    }
}
