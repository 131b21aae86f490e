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

    /// A trigger's condition that an update changed an indexed value: a write of the whole row
    /// (adopting the server's version, a pull) that leaves the text as it was is not indexed again.
    var changedCondition: String {
        columns.map { "old.\($0.quotedSQLName) IS NOT new.\($0.quotedSQLName)" }.joined(separator: " OR ")
    }

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

    /// Pages of index one ``merge(_:starting:)`` writes: about 10 ms of work at a million rows.
    static let mergePages = 200

    /// Merges the index's b-trees into one, about ``mergePages`` pages of it per call (FTS5's
    /// incremental `merge`), in the caller's transaction; true while work is left. The first call
    /// of a merge is `starting` (it gathers every b-tree); the next ones carry it on, also when
    /// rows are indexed between them.
    ///
    /// Each catch-up chunk leaves a b-tree, and every search reads all of them: after a pull of a
    /// million rows (13 b-trees) counting a trigram's rows took 2.2 times as long as in one.
    func merge(_ db: Database, starting: Bool) throws -> Bool {
        let before = db.totalChangesCount
        let fts = ftsTable.quotedSQLName
        try db.execute(
            sql: "INSERT INTO \(fts) (\(fts), rank) VALUES ('merge', ?)",
            arguments: [starting ? -Self.mergePages : Self.mergePages])
        // FTS5's own test: fewer than two changes means the merge found nothing to do.
        return db.totalChangesCount - before >= 2
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

    /// How far ``matchExpression(for:in:mark:)`` counts a trigram's rows.
    static let rarityCap = 64

    /// How many of the newest indexed rows ``matchExpression(for:in:mark:)`` samples to tell a
    /// trigram a quarter of the rows hold from one every row holds.
    static let sampleSize = 256

    /// The `MATCH` expression of a search of three characters or more, and whether it only narrows
    /// the rows down (then ``scanCondition`` must judge each). `mark` is the newest row indexed.
    ///
    /// The whole search as a phrase makes FTS5 read the row lists of every trigram in it: for
    /// "number 777777" among a million "number N" rows, lists of a million rows each, for a handful
    /// of matches (70 ms). Asking for the rows holding two or three of its rarer trigrams (FTS5
    /// steps the rarest list and seeks in the others) and judging those rows by the whole search
    /// costs a millisecond or two; ANDing a trigram every row holds costs as much as the phrase. So:
    /// 1. every other trigram's rows (and the last's: any substring of four characters or more
    ///    holds one of them) are counted up to ``rarityCap`` (an FTS5 list is read lazily, so a
    ///    common trigram costs no more than a rare one); none: the search finds nothing; some under
    ///    the cap: the (up to) three rarest (``rarest(_:)``).
    /// 2. Otherwise each is counted among the newest ``sampleSize`` rows, and the (up to) three
    ///    that fewest of them hold, if under a quarter (``rarest(_:)``).
    /// 3. When every trigram is that common, the phrase finds its rows soon: it is asked as it is.
    func matchExpression(
        for search: String, in db: Database, mark: Int64
    ) throws -> (expression: String, narrowsOnly: Bool) {
        let phrase = Self.phrase(search)
        let scalars = Array(search.lowercased().unicodeScalars)
        // ``scanCondition`` ignores the case of ASCII letters only, as the index does of all.
        guard scalars.count > 3, scalars.allSatisfy(\.isASCII) else { return (phrase, false) }
        var trigrams: [String] = []
        for start in Array(stride(from: 0, through: scalars.count - 3, by: 2)) + [scalars.count - 3] {
            var trigram = String.UnicodeScalarView()
            trigram.append(contentsOf: scalars[start..<start + 3])
            let text = Self.phrase(String(trigram))
            if !trigrams.contains(text) { trigrams.append(text) }
        }
        let fts = ftsTable.quotedSQLName
        let count = try db.cachedStatement(
            sql: "SELECT count(*) FROM (SELECT 1 FROM \(fts) WHERE \(fts) MATCH ? LIMIT ?)")
        var rare: [(phrase: String, rows: Int)] = []
        for trigram in trigrams {
            let rows = try Int.fetchOne(count, arguments: [trigram, Self.rarityCap]) ?? 0
            if rows == 0 { return (trigram, true) }
            if rows < Self.rarityCap { rare.append((trigram, rows)) }
        }
        guard rare.isEmpty else { return (Self.rarest(rare), true) }
        let sampleStart =
            try Int64.fetchOne(
                db.cachedStatement(
                    sql:
                        "SELECT rowid FROM \(table.quotedSQLName) WHERE rowid <= ? ORDER BY rowid DESC LIMIT 1 OFFSET ?"
                ),
                arguments: [mark, Self.sampleSize - 1]) ?? 0
        let sampled = try db.cachedStatement(
            sql: "SELECT count(*) FROM \(fts) WHERE \(fts) MATCH ? AND rowid >= ? AND rowid <= ?")
        var uncommon: [(phrase: String, rows: Int)] = []
        for trigram in trigrams {
            let rows = try Int.fetchOne(sampled, arguments: [trigram, sampleStart, mark]) ?? 0
            if rows < Self.sampleSize / 4 { uncommon.append((trigram, rows)) }
        }
        return uncommon.isEmpty ? (phrase, false) : (Self.rarest(uncommon), true)
    }

    /// The (up to) three rarest of `counted` ANDed, without those held by over four times as many
    /// rows as the rarest (and more than a few): FTS5 steps through every list it is given, and a
    /// long one costs more than it narrows. At a million rows, "number 500000 with" took 1.1 ms
    /// with `"0 w"` (a tenth of the rows) beside its two rare trigrams, and 0.23 ms without it.
    static func rarest(_ counted: [(phrase: String, rows: Int)]) -> String {
        let sorted = counted.sorted { $0.rows < $1.rows }
        let limit = 4 * (sorted.first?.rows ?? 0) + 8
        return sorted.prefix(3).filter { $0.rows <= limit }.map(\.phrase).joined(separator: " AND ")
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
