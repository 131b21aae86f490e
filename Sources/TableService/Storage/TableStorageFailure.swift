/// Why a table store's database failed a request, in the service's words.
///
/// Each store turns its driver's errors into one of these in a single function at its edge
/// (``SQLiteTableStore/failure(_:)`` for GRDB's `DatabaseError`, ``PostgresTableStore/failure(_:)``
/// for postgres-nio's `PSQLError`); nothing else reads result codes, SQLSTATEs or messages. The HTTP
/// side gives each case its status and message in one place (`TableStorageFailure+HTTP.swift`).
///
/// A version that does not match is not a failure of the database: the stores find it themselves
/// and answer ``TableError/preconditionFailed(_:)`` or ``TableError/conflict(_:)`` with the stored item.
enum TableStorageFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// An insert met an id the table already holds. The stores answer it as
    /// ``TableError/alreadyExists(_:)`` with the stored item when the caller may see it.
    case duplicateID
    /// A query beyond the database's limits (nesting, terms, parameters); the database's words.
    case queryTooComplex(String)
    /// The database cannot serve now: busy, out of reach, shutting down, or out of space, memory or
    /// connections. Trying again later may work.
    case unavailable(String)
    /// A value or row larger than the database keeps (or more columns than a table may have).
    case tooLarge(String)
    /// The database file or an index is damaged, or the file is not a database.
    case corrupt(String)
    /// The item changed under every attempt to write it (other writers kept winning the race).
    case keptChanging(id: String)
    /// The disk refused to sync a commit: the write may not survive a power cut, so it is not
    /// acknowledged, and no later one is until the service restarts.
    case notDurable(String)
    /// Any other failure, in the database's own words.
    case other(String)

    /// What happened, for the service's log (never sent to clients: it may quote SQL).
    var description: String {
        switch self {
        case .duplicateID: "An item with this id already exists."
        case .queryTooComplex(let detail): "The query is too complex for the database: \(detail)"
        case .unavailable(let detail): "The database is not available: \(detail)"
        case .tooLarge(let detail): "A value or row is too large for the database: \(detail)"
        case .corrupt(let detail): "The database is damaged: \(detail)"
        case .keptChanging(let id): "The item '\(id)' kept changing while it was being written."
        case .notDurable(let detail): detail
        case .other(let detail): detail
        }
    }
}
