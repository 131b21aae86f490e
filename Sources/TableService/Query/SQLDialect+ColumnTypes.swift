/// The column types of the service's own tables (the fleet's, the revocations', the escrow's and
/// the schema changes'), which each store creates when it opens.
extension SQLDialect {
    /// A text column: PostgreSQL's compares byte by byte (`COLLATE "C"`), as SQLite's does.
    var textColumn: String { self == .postgres ? "text COLLATE \"C\"" : "TEXT" }

    /// A 64-bit integer column (milliseconds since 1970, counts).
    var integerColumn: String { self == .postgres ? "bigint" : "INTEGER" }
}
