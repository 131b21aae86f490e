import GRDB

/// What keeps a table's lists flat in cost as it grows: row counts, an index per boolean column,
/// and a trigram full-text index of its text columns (``SearchIndex``), which bulk writes leave
/// behind and which catch up after them.
///
/// The counts (in `__rowCounts`) and the search index hold exactly the rows whose rowid is at most
/// the table's **mark** (in `__searchProgress`, named when it was the search index's alone):
///
/// - a new row is past the mark: rowids grow, and a trigger keeps the mark at or below the largest
///   rowid when rows are deleted, so a rowid is never reused below it. So inserting a row runs no
///   trigger at all, which is what makes a pull's writes cheap;
/// - triggers uncount and unindex a row up to the mark when it is deleted, and recount or re-index
///   it when its flag or its text changes, in the transaction that changes it (whoever writes it);
/// - ``catchUp(_:limit:)`` counts and indexes the rows past the mark, oldest first, and moves the
///   mark. Local edits catch up in their own transaction; a pull leaves its rows to the
///   ``ListIndexer`` that runs after it;
/// - a count adds the rows past the mark (``count(_:flag:)``), and a search scans them
///   (``SearchIndex/scanCondition``), so both are exact at every moment.
///
/// Rows keep their rowid when changed (writes are upserts), so a changed row never moves past the mark.
struct ListIndex: Sendable {
    /// The table.
    let table: String
    /// The boolean columns whose true rows are counted and indexed (`complete`).
    let flags: [String]
    /// The search index, when the table has text columns.
    let search: SearchIndex?

    /// The rows past a mark, up to a limit: their count, the last rowid and each flag's true rows.
    /// Made once: a local edit runs it, and building it cost as much as running it.
    private let tailSQL: String

    init(_ table: TableDescription) {
        self.table = table.name
        flags = table.columns.filter { $0.type == .boolean }.map(\.name)
        search = SearchIndex(table)
        let flagSums = flags.map { ", sum(coalesce(\($0.quotedSQLName), 0) = 1)" }.joined()
        let flagColumns = flags.map { ", \($0.quotedSQLName)" }.joined()
        tailSQL =
            "SELECT count(*), max(rowid)\(flagSums) FROM "
            + "(SELECT rowid\(flagColumns) FROM \(table.name.quotedSQLName) WHERE rowid > ? ORDER BY rowid LIMIT ?)"
    }

    private var name: String { table.quotedSQLName }
    private var key: String { literal(table) }

    /// `text` for inside an SQL string literal.
    private func literal(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "''") }

    // MARK: Reading

    /// The mark: rows up to this rowid are counted and in the search index.
    func mark(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT indexedThrough FROM __searchProgress WHERE tableName = ?"),
            arguments: [table]) ?? 0
    }

    /// The number of rows, or of rows whose `flag` is true: the count kept up to the mark plus the
    /// rows past it.
    func count(_ db: Database, flag: String? = nil) throws -> Int {
        let kept =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT rows FROM __rowCounts WHERE tableName = ? AND columnName = ?"),
                arguments: [table, flag ?? ""]) ?? 0
        let condition = flag.map { " AND coalesce(\($0.quotedSQLName), 0) = 1" } ?? ""
        let past =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM \(name) WHERE rowid > ?\(condition)"),
                arguments: [try mark(db)]) ?? 0
        return kept + past
    }

    // MARK: Catching up

    /// Counts and indexes up to `limit` rows past the mark, oldest first, and moves the mark past
    /// them, in the caller's transaction. Returns how many rows it took in: 0 when caught up.
    @discardableResult
    func catchUp(_ db: Database, limit: Int) throws -> Int {
        let from = try mark(db)
        guard
            let tail = try Row.fetchOne(db.cachedStatement(sql: tailSQL), arguments: [from, limit]),
            let through = tail[1] as Int64?
        else { return 0 }
        let bump = try db.cachedStatement(
            sql: "UPDATE __rowCounts SET rows = rows + ? WHERE tableName = ? AND columnName = ?")
        try bump.execute(arguments: [tail[0] as Int, table, ""])
        for (offset, flag) in flags.enumerated() {
            try bump.execute(arguments: [tail[2 + offset] as Int, table, flag])
        }
        try search?.index(db, after: from, through: through)
        try db.cachedStatement(sql: "UPDATE __searchProgress SET indexedThrough = ? WHERE tableName = ?")
            .execute(arguments: [through, table])
        return tail[0]
    }

    // MARK: Schema

    static let countsTable = """
        CREATE TABLE IF NOT EXISTS __rowCounts (
            tableName TEXT NOT NULL, columnName TEXT NOT NULL, rows INTEGER NOT NULL,
            PRIMARY KEY (tableName, columnName)
        ) WITHOUT ROWID
        """

    static let progressTable = """
        CREATE TABLE IF NOT EXISTS __searchProgress (
            tableName TEXT PRIMARY KEY NOT NULL, indexedThrough INTEGER NOT NULL
        ) WITHOUT ROWID
        """

    /// Creates what is missing of the flag indexes, the search index, the counts, the mark and the
    /// triggers. When the triggers are not exactly this version's (a new store or column, or a store
    /// of an older todosync, whose triggers counted and indexed every insert), they are replaced and
    /// the counts recomputed up to the mark. The mark stays where it was, or, for an older store
    /// whose index held every row, goes to the last row; a search index made anew starts at mark 0,
    /// and the rows already stored are caught up like pulled ones.
    func create(in db: Database) throws {
        try db.execute(sql: Self.countsTable)
        try db.execute(sql: Self.progressTable)
        for flag in flags {
            try db.execute(
                sql: "CREATE INDEX IF NOT EXISTS \("\(table)__\(flag)".quotedSQLName) ON \(name) "
                    + "(coalesce(\(flag.quotedSQLName), 0))")
        }
        let triggers = self.triggers
        let existing = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", arguments: [table]
        ).map { row in (row["name"] as String, row["sql"] as String) }
        if existing.count == triggers.count,
            existing.allSatisfy({ name, sql in triggers.contains { $0.name == name && $0.sql == sql } })
        {
            return
        }
        for (trigger, _) in existing {
            try db.execute(sql: "DROP TRIGGER \(trigger.quotedSQLName)")
        }
        let last = try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM \(name)") ?? 0
        var mark = try Int64.fetchOne(
            db, sql: "SELECT indexedThrough FROM __searchProgress WHERE tableName = ?", arguments: [table])
        if let search, try search.create(in: db) == .created {
            mark = 0
        } else if search != nil, mark == nil {
            mark = last
        }
        let kept = min(mark ?? 0, last)
        try db.execute(
            sql: "INSERT OR REPLACE INTO __searchProgress (tableName, indexedThrough) VALUES (?, ?)",
            arguments: [table, kept])
        try db.execute(sql: "DELETE FROM __rowCounts WHERE tableName = ?", arguments: [table])
        for column in [""] + flags {
            let condition = column.isEmpty ? "" : " AND coalesce(\(column.quotedSQLName), 0) = 1"
            try db.execute(
                sql: "INSERT INTO __rowCounts (tableName, columnName, rows) "
                    + "SELECT ?, ?, count(*) FROM \(name) WHERE rowid <= ?\(condition)",
                arguments: [table, column, kept])
        }
        for trigger in triggers { try db.execute(sql: trigger.sql) }
    }

    /// This version's triggers, with the exact statements that create them.
    private var triggers: [(name: String, sql: String)] {
        let markValue = "(SELECT indexedThrough FROM __searchProgress WHERE tableName = '\(key)')"
        let last = "(SELECT coalesce(max(rowid), 0) FROM \(name))"
        func trigger(_ suffix: String, _ body: String) -> (name: String, sql: String) {
            let triggerName = "\(table)__list_\(suffix)"
            return (triggerName, "CREATE TRIGGER \(triggerName.quotedSQLName) \(body)")
        }
        let isCounted = "old.rowid <= \(markValue)"
        let uncount =
            ["UPDATE __rowCounts SET rows = rows - 1 WHERE tableName = '\(key)' AND columnName = '' AND \(isCounted);"]
            + flags.map { flag in
                "UPDATE __rowCounts SET rows = rows - 1 WHERE tableName = '\(key)' AND columnName = '\(literal(flag))' "
                    + "AND coalesce(old.\(flag.quotedSQLName), 0) = 1 AND \(isCounted);"
            }
        // One trigger, whose statements run in order: the row is uncounted and unindexed against the
        // mark as it was, then the mark comes down to the last row if it was above it.
        let lowerMark =
            "UPDATE __searchProgress SET indexedThrough = \(last) "
            + "WHERE tableName = '\(key)' AND indexedThrough > \(last);"
        var triggers = [
            trigger(
                "delete",
                "AFTER DELETE ON \(name) BEGIN "
                    + (uncount + [search.map { $0.removeStatement(when: isCounted) }, lowerMark].compactMap { $0 })
                    .joined(separator: " ") + " END")
        ]
        for flag in flags {
            let column = flag.quotedSQLName
            triggers.append(
                trigger(
                    "flag_\(flag)",
                    "AFTER UPDATE OF \(column) ON \(name) WHEN old.rowid <= \(markValue) "
                        + "AND coalesce(old.\(column), 0) != coalesce(new.\(column), 0) BEGIN "
                        + "UPDATE __rowCounts SET rows = rows + "
                        + "(CASE WHEN coalesce(new.\(column), 0) = 1 THEN 1 ELSE -1 END) "
                        + "WHERE tableName = '\(key)' AND columnName = '\(literal(flag))'; END"))
        }
        if let search {
            triggers.append(
                trigger(
                    "text",
                    "AFTER UPDATE OF \(search.columnList) ON \(name) WHEN old.rowid <= \(markValue) "
                        + "AND (\(search.changedCondition)) BEGIN "
                        + "\(search.removeStatement()) \(search.insertStatement) END"))
        }
        return triggers
    }
}
