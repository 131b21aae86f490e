import PostgresNIO

/// PostgreSQL's errors as the service's: the one place that reads SQLSTATEs and postgres-nio's
/// error codes, compared as postgres-nio's typed constants.
extension PostgresTableStore {
    /// The failure a postgres-nio error stands for: by the SQLSTATE the server sent, else by the
    /// client's own error code (a connection that failed, too many parameters).
    static func failure(_ error: PSQLError) -> TableStorageFailure {
        let detail = describeForLog(error)
        guard let state = sqlState(of: error) else {
            switch error.code {
            case .tooManyParameters: return .queryTooComplex(detail)
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
                .sslUnsupported, .failedToAddSSLHandler:
                return .unavailable(detail)
            default: return .other(detail)
            }
        }
        switch state {
        case .uniqueViolation: return .duplicateID
        case .statementTooComplex, .programLimitExceeded: return .queryTooComplex(detail)
        case .tooManyColumns: return .tooLarge(detail)
        case .dataCorrupted, .indexCorrupted: return .corrupt(detail)
        case .connectionException, .connectionDoesNotExist, .connectionFailure,
            .sqlclientUnableToEstablishSqlconnection, .sqlserverRejectedEstablishmentOfSqlconnection,
            .insufficientResources, .diskFull, .outOfMemory, .tooManyConnections, .adminShutdown, .crashShutdown,
            .cannotConnectNow, .serializationFailure, .deadlockDetected, .lockNotAvailable:
            return .unavailable(detail)
        default: return .other(detail)
        }
    }

    /// Any error a store call threw, as a table error: table errors pass unchanged,
    /// postgres-nio's are mapped by ``failure(_:)``, anything else is ``TableStorageFailure/other(_:)``.
    static func tableError(_ error: any Error) -> TableError {
        switch error {
        case let error as TableError: error
        case let error as PSQLError: .storage(failure(error))
        case let error as PostgresPoolClosed: .storage(.unavailable(error.description))
        default: .storage(.other(describe(error)))
        }
    }

    /// Whether PostgreSQL refused a prepared statement because its table changed shape since it
    /// was prepared ("cached plan must not change result type"): it is prepared again.
    static func isStalePreparedPlan(_ error: PSQLError) -> Bool {
        sqlState(of: error) == .featureNotSupported
    }

    /// A readable sentence for a PostgreSQL or connection error.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }

    /// The SQLSTATE, the server's message and the statement, for the log.
    private static func describeForLog(_ error: PSQLError) -> String {
        guard let state = error.serverInfo?[.sqlState] else { return describe(error) }
        return "\(state) \(error.serverInfo?[.message] ?? ""): \(error.query?.sql ?? "")"
    }

    /// The SQLSTATE the server sent, `nil` for an error of the client (a connection that failed…).
    private static func sqlState(of error: PSQLError) -> PostgresError.Code? {
        error.serverInfo?[.sqlState].map(PostgresError.Code.init(raw:))
    }
}
