import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The connections of one store: opened on demand up to a limit, all on one event loop, kept open
/// and lent to one caller at a time; callers past the limit wait their turn in order.
///
/// Our own rather than `PostgresClient`'s pool (postgres-nio 1.33), for two measured reasons:
/// - with connections kept open (its minimum at the limit), that pool traps on
///   `minimumConcurrentConnections <= stats.active` at the first lease after a PostgreSQL restart
///   (`Tests/Browser/test_postgres_faults.py` crashed an instance);
/// - with fewer kept open, it starts an idle timer (a task and a sleep) at every release: with its
///   state machine, about a fifth of the service's CPU per insert and four thread switches of the
///   ten an insert took.
/// Nothing here runs a timer: a connection that PostgreSQL closed (a restart, an administrator's
/// `pg_terminate_backend`) is dropped when it comes back or is next picked, and a failure of the
/// connection itself closes it; its caller's request fails, the next one opens a new connection.
final class PostgresConnectionPool: Sendable {
    /// What a caller gets: a connection to use, or the right to open one (a free place).
    private enum Grant {
        case connection(PostgresConnection)
        case open
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Connections open or being opened.
        var count = 0
        var waiting: [CheckedContinuation<Grant, any Error>] = []
        var isClosed = false
        var nextID = 0
    }

    private let location: PostgresLocation
    private let limit: Int
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let state = Mutex(State())

    /// A pool of at most `location.poolSize` connections to `location`, all on `eventLoop`.
    init(location: PostgresLocation, eventLoop: any EventLoop, logger: Logger) {
        self.location = location
        self.limit = max(1, location.poolSize)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    deinit { close() }

    /// Lends a connection to `body` and takes it back after; one that failed as a connection is
    /// closed instead. Throws ``PSQLError/poolClosed`` once the pool is closed.
    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            if Self.brokeConnection(error) { try? await connection.close() }
            release(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction (`BEGIN`, then `COMMIT`, or `ROLLBACK` when it throws).
    func withTransaction<T: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// The rows of `query`, read in full.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.query(query, logger: logger).collect() }
    }

    /// Closes the connections (those lent out when they come back) and refuses every caller since.
    func close() {
        let (idle, waiting) = state.withLock { state in
            state.isClosed = true
            defer {
                state.idle = []
                state.waiting = []
            }
            return (state.idle, state.waiting)
        }
        for continuation in waiting { continuation.resume(throwing: PostgresPoolClosed()) }
        for connection in idle { Self.closeInBackground(connection) }
    }

    private func lease() async throws -> PostgresConnection {
        let grant: Grant
        if let immediate = try state.withLock({ state throws -> Grant? in try Self.take(&state, limit: limit) }) {
            grant = immediate
        } else {
            grant = try await withCheckedThrowingContinuation { continuation in
                // Asked again under the lock: a connection may have come back since.
                let taken = state.withLock { state -> Result<Grant, any Error>? in
                    do {
                        if let grant = try Self.take(&state, limit: limit) { return .success(grant) }
                    } catch { return .failure(error) }
                    state.waiting.append(continuation)
                    return nil
                }
                if let taken { continuation.resume(with: taken) }
            }
        }
        switch grant {
        case .connection(let connection): return connection
        case .open:
            do {
                let id = state.withLock { state in
                    state.nextID += 1
                    return state.nextID
                }
                return try await PostgresConnection.connect(
                    on: eventLoop, configuration: try location.connectionConfiguration(), id: id, logger: logger)
            } catch {
                vacate()
                throw error
            }
        }
    }

    /// An open idle connection, else the right to open one, else nil (wait).
    private static func take(_ state: inout State, limit: Int) throws -> Grant? {
        if state.isClosed { throw PostgresPoolClosed() }
        while let connection = state.idle.popLast() {
            if !connection.isClosed { return .connection(connection) }
            state.count -= 1
        }
        guard state.count < limit else { return nil }
        state.count += 1
        return .open
    }

    /// Takes back a lent connection: to the first waiting caller, else among the idle ones; a
    /// closed one leaves its place to the first waiting caller, who opens another.
    private func release(_ connection: PostgresConnection) {
        guard !connection.isClosed else { return vacate() }
        let (waiter, closing) = state.withLock { state -> (CheckedContinuation<Grant, any Error>?, Bool) in
            if state.isClosed {
                state.count -= 1
                return (nil, true)
            }
            if !state.waiting.isEmpty { return (state.waiting.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if closing { Self.closeInBackground(connection) }
        waiter?.resume(returning: .connection(connection))
    }

    /// A place freed (a connection closed, or one that could not be opened): the first waiting
    /// caller may open one.
    private func vacate() {
        let waiter = state.withLock { state -> CheckedContinuation<Grant, any Error>? in
            if !state.isClosed, !state.waiting.isEmpty { return state.waiting.removeFirst() }
            state.count -= 1
            return nil
        }
        waiter?.resume(returning: .open)
    }

    /// Closes `connection` without waiting, keeping it until it is closed (postgres-nio asserts
    /// that a connection is closed before it goes).
    private static func closeInBackground(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Whether `error` left the connection unusable (rather than being the server's answer to a
    /// statement, after which the connection goes on).
    private static func brokeConnection(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .messageDecodingFailure,
            .unexpectedBackendMessage, .receivedUnencryptedDataAfterSSLRequest:
            return true
        default: return false
        }
    }
}

/// A store call after its store closed (the service is stopping).
struct PostgresPoolClosed: Error, CustomStringConvertible {
    var description: String { "the service is stopping: its PostgreSQL connections are closed" }
}
