import GRDB

/// The trigram full-text index of a table's text columns: an external-content FTS5 table
/// (`todoitem__search`) holding the rows up to the table's mark, with their current text.
/// ``ListIndex`` owns the mark, the triggers and the catching up.
struct SearchIndex: Sendable {
    /// The table indexed.
    let table: String
    /// The columns indexed: the table's text columns.
    let columns: [String]

    /// The index of `table`, nil when it has no text column. Text columns FTS5 cannot name (`rank`,
    /// `rowid`, the index's own name) are left out: searches do not look into them.
    init?(_ table: TableDescription) {
        let reserved: Set<String> = ["rank", "rowid", (table.name + "__search").lowercased()]
        let columns = table.columns.filter { $0.type == .text && !reserved.contains($0.name.lowercased()) }.map(\.name)
        guard !columns.isEmpty else { return nil }
        self.table = table.name
        self.columns = columns
    }

    /// The FTS5 table (`todoitem__search`).
    var ftsTable: String { table + "__search" }

    /// The indexed columns, quoted, comma-separated.
    var columnList: String { columns.map(\.quotedSQLName).joined(separator: ", ") }

    enum Creation { case created, existed }

    /// Creates the FTS5 table, empty, unless it exists with these columns; one with other columns
    /// (a text column was added) is made anew.
    func create(in db: Database) throws -> Creation {
        let fts = ftsTable.quotedSQLName
        if try db.tableExists(ftsTable) {
            if try db.columns(in: ftsTable).map(\.name) == columns { return .existed }
            try db.execute(sql: "DROP TABLE \(fts)")
        }
        try db.execute(
            sql: "CREATE VIRTUAL TABLE \(fts) USING fts5(\(columnList), content=\(table.quotedSQLName), "
                + "content_rowid='rowid', tokenize='trigram case_sensitive 0')")
        return .created
    }

    /// Indexes the rows with rowids in `after + 1 ... through`, in the caller's transaction.
    func index(_ db: Database, after from: Int64, through: Int64) throws {
        try db.cachedStatement(
            sql: "INSERT INTO \(ftsTable.quotedSQLName) (rowid, \(columnList)) "
                + "SELECT rowid, \(columnList) FROM \(table.quotedSQLName) WHERE rowid > ? AND rowid <= ?"
        ).execute(arguments: [from, through])
    }

    /// A trigger's statement indexing `new` row.
    var insertStatement: String {
        let values = columns.map { "new.\($0.quotedSQLName)" }.joined(separator: ", ")
        return "INSERT INTO \(ftsTable.quotedSQLName) (rowid, \(columnList)) VALUES (new.rowid, \(values));"
    }

    /// A trigger's statement removing `old` row from the index, when `condition` holds.
    func removeStatement(when condition: String = "1") -> String {
        let fts = ftsTable.quotedSQLName
        let values = columns.map { "old.\($0.quotedSQLName)" }.joined(separator: ", ")
        return
            "INSERT INTO \(fts) (\(fts), rowid, \(columnList)) SELECT 'delete', old.rowid, \(values) WHERE \(condition);"
    }

    /// How far ``matchExpression(for:in:caps:)`` counts a trigram's rows: first a little, then more
    /// only when every trigram had at least that many.
    static let rarityCaps = [64, 4096]

    /// The `MATCH` expression of a search of three characters or more, and whether it only narrows
    /// the rows down (then ``scanCondition`` must judge each).
    ///
    /// The whole search as a phrase makes FTS5 walk the row lists of every trigram in it: for
    /// "number 777777" among a million "number N" rows, five lists of a million rows each, for a
    /// handful of matches. So every other trigram's rows are first counted, up to a cap (an FTS5
    /// list is read lazily: counting a common trigram up to the cap costs as little as a rare one);
    /// when some are rarer than that, the index is asked for the rows holding the (up to) three
    /// rarest, and the rows it gives are judged by the whole search. The caps rise (``rarityCaps``):
    /// a search that hits a few rows has a trigram under the first, and counting every trigram up to
    /// 64 rows costs a sixty-fourth of counting them up to 4,096. When every trigram is common, the
    /// phrase is as fast as anything.
    func matchExpression(
        for search: String, in db: Database, caps: [Int] = rarityCaps
    ) throws -> (expression: String, narrowsOnly: Bool) {
        let phrase = Self.phrase(search)
        let scalars = Array(search.lowercased().unicodeScalars)
        // ``scanCondition`` ignores the case of ASCII letters only, as the index does of all.
        guard scalars.count > 3, scalars.allSatisfy(\.isASCII) else { return (phrase, false) }
        let fts = ftsTable.quotedSQLName
        let count = try db.cachedStatement(
            sql: "SELECT count(*) FROM (SELECT 1 FROM \(fts) WHERE \(fts) MATCH ? LIMIT ?)")
        // Every other trigram (and the last): any substring of four characters or more holds one of
        // them, and counting takes half the time.
        var trigrams: [String] = []
        for start in Array(stride(from: 0, through: scalars.count - 3, by: 2)) + [scalars.count - 3] {
            var trigram = String.UnicodeScalarView()
            trigram.append(contentsOf: scalars[start..<start + 3])
            let text = Self.phrase(String(trigram))
            if !trigrams.contains(text) { trigrams.append(text) }
        }
        for cap in caps {
            var rare: [(phrase: String, rows: Int)] = []
            for trigram in trigrams {
                let rows = try Int.fetchOne(count, arguments: [trigram, cap]) ?? 0
                // No row holds it: the search finds nothing, whatever the other trigrams.
                if rows == 0 { return (trigram, true) }
                if rows < cap { rare.append((trigram, rows)) }
            }
            if !rare.isEmpty {
                return (rare.sorted { $0.rows < $1.rows }.prefix(3).map(\.phrase).joined(separator: " AND "), true)
            }
        }
        return (phrase, false)
    }

    /// `text` as one FTS5 phrase (quoted, its quotes doubled).
    static func phrase(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Rows whose text contains the search, ignoring (ASCII) case, judged row by row: for the rows
    /// past the mark, and for searches shorter than a trigram. One argument per column, each the
    /// search text.
    var scanCondition: String {
        let name = table.quotedSQLName
        return "("
            + columns.map { "instr(lower(\(name).\($0.quotedSQLName)), lower(?)) > 0" }
            .joined(separator: " OR ") + ")"
    }
}
