import GRDB
import Storage

/// SQLite's errors as the service's: the one place that reads GRDB's result codes and messages.
extension SQLiteTableStore {
    /// What SQLite's messages say when a statement passes its own limits. SQLite reports them all
    /// as a plain `SQLITE_ERROR`, so its message is the only thing that tells them apart.
    private static let tooComplexMessages = [
        "parser stack overflow", "Expression tree is too large", "too many SQL variables", "too many terms",
    ]

    /// What SQLite's message says of a table (or statement) with more columns than it allows
    /// (also a plain `SQLITE_ERROR`).
    private static let tooManyColumnsMessage = "too many columns"

    /// The failure a GRDB error stands for, by its result code (and, for a plain `SQLITE_ERROR`,
    /// its message).
    static func failure(_ error: DatabaseError) -> TableStorageFailure {
        let detail = "\(error)"
        if error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY { return .duplicateID }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_NOMEM: return .unavailable(detail)
        case .SQLITE_TOOBIG: return .tooLarge(detail)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .corrupt(detail)
        case .SQLITE_ERROR:
            let message = error.message ?? ""
            if tooComplexMessages.contains(where: message.contains) { return .queryTooComplex(detail) }
            if message.contains(tooManyColumnsMessage) { return .tooLarge(detail) }
            return .other(detail)
        default: return .other(detail)
        }
    }

    /// Any error a store call threw, as a table error: table errors pass unchanged, GRDB's are
    /// mapped by ``failure(_:)``, anything else is ``TableStorageFailure/other(_:)``.
    static func tableError(_ error: any Error) -> TableError {
        switch error {
        case let error as TableError: error
        case let error as DatabaseError: .storage(failure(error))
        case let error as DurabilityError: .storage(.notDurable(error.description))
        default: .storage(.other("\(error)"))
        }
    }
}
