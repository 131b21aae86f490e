import GRDB

/// How many of its newest rows a store table keeps (the conflict journal, the flight recorder): the
/// number is saved in `__config` under `key` (`fallback` when none is), and rows are numbered by an
/// ever-growing `order` column.
struct Retention: Sendable {
    let table: String
    let order: String
    let key: String
    let fallback: Int
    /// ``dropBeyond(_:newest:)``'s statement, made once (it runs after every row stored).
    private let dropSQL: String

    init(table: String, order: String, key: String, fallback: Int) {
        (self.table, self.order, self.key, self.fallback) = (table, order, key, fallback)
        dropSQL = """
            DELETE FROM \(table) WHERE \(order) <= ? - coalesce(
                (SELECT CAST(value AS INTEGER) FROM __config WHERE key = ? AND value GLOB '[0-9]*' AND value NOT GLOB '*[^0-9]*'), ?)
            """
    }

    /// How many rows are kept.
    func count(_ db: Database) throws -> Int {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM __config WHERE key = ?"), arguments: [key])
            .flatMap(Int.init) ?? fallback
    }

    /// Keeps the newest `count` rows from now on (and drops older ones at once).
    func set(_ db: Database, _ count: Int) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO __config (key, value) VALUES (?, ?)", arguments: [key, String(count)])
        try db.execute(
            sql: "DELETE FROM \(table) WHERE \(order) <= (SELECT max(\(order)) FROM \(table)) - ?", arguments: [count])
    }

    /// Drops the rows older than the kept number, `newest` being the number of the last one stored.
    /// One statement (the kept number read by SQLite): it runs after every journal entry, history
    /// event and recorded exchange.
    func dropBeyond(_ db: Database, newest: Int64) throws {
        try db.cachedStatement(sql: dropSQL).execute(arguments: [newest, key, fallback])
    }
}
