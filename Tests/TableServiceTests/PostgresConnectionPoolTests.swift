import Logging
import PostgresNIO
import Synchronization
import TestSupport
import Testing

@testable import TableService

/// The store's own pool: callers past its limit wait their turn, a connection PostgreSQL closed
/// is replaced, a connection that cannot be opened fails its caller without stalling the others,
/// and a closed pool refuses everyone.
@Suite(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
struct PostgresConnectionPoolTests {
    let logger = Logger(label: "todosync.tests.pool")

    func pool(limit: Int, url given: String? = nil) async throws -> PostgresConnectionPool {
        let url = if let given { given } else { try await TestPostgres.freshDatabaseURL() }
        var location = try PostgresLocation(url: url, poolSize: limit)
        location.tls = .disable
        return PostgresConnectionPool(
            location: location, eventLoop: PostgresConnection.defaultEventLoopGroup.next(), logger: logger)
    }

    @Test func callersPastTheLimitWaitTheirTurnAndAllAreServed() async throws {
        let pool = try await pool(limit: 3)
        defer { pool.close() }
        let tally = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<30 {
                group.addTask {
                    try await pool.withConnection { connection in
                        tally.state.withLock {
                            $0.inUse += 1
                            $0.most = max($0.most, $0.inUse)
                        }
                        let rows = try await connection.query(
                            "SELECT pg_backend_pid() FROM pg_sleep(0.01)", logger: logger)
                        for try await pid in rows.decode(Int32.self) {
                            tally.state.withLock { _ = $0.backends.insert(pid) }
                        }
                        tally.state.withLock { $0.inUse -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(tally.state.withLock { $0.most } <= 3)
        #expect(tally.state.withLock { $0.backends.count } <= 3)
    }

    @Test func aConnectionThatPostgreSQLClosedIsReplaced() async throws {
        let pool = try await pool(limit: 1)
        defer { pool.close() }
        let first = try await backend(of: pool)
        // Terminated from another session, as an administrator or a restart would.
        let url = try await TestPostgres.freshDatabaseURL()
        _ = try await TestPostgres.textRows("SELECT pg_terminate_backend(\(first))", url: url)
        // The caller that meets the dead connection may fail (nothing was sent on it that it
        // did not learn of); the place is freed, and a later caller gets a new connection.
        var next: Int32?
        for _ in 0..<20 where next == nil {
            next = try? await backend(of: pool)
        }
        let replaced = try #require(next)
        #expect(replaced != first)
        #expect(try await backend(of: pool) == replaced)
    }

    @Test func aConnectionThatCannotOpenFailsEachCallerWithoutStallingTheOthers() async throws {
        // A port nothing listens on.
        let pool = try await pool(limit: 1, url: "postgres://todosync@127.0.0.1:1/none?sslmode=disable")
        defer { pool.close() }
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 {
                group.addTask { (try? await self.backend(of: pool)) == nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 5)
    }

    @Test func aClosedPoolRefusesItsWaitingAndLaterCallers() async throws {
        let pool = try await pool(limit: 1)
        let holding = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await pool.withConnection { _ in
                holding.continuation.yield()
                for await _ in release.stream { break }
            }
        }
        for await _ in holding.stream { break }
        let waiter = Task { try await self.backend(of: pool) }
        // The waiter is refused once the pool closes, whether it was already waiting or not.
        pool.close()
        await #expect(throws: PostgresPoolClosed.self) { try await waiter.value }
        await #expect(throws: PostgresPoolClosed.self) { try await self.backend(of: pool) }
        release.continuation.yield()
        try await holder.value
    }

    /// What the callers of one test saw, shared by their tasks.
    private final class Tally: Sendable {
        let state = Mutex((inUse: 0, most: 0, backends: Set<Int32>()))
    }

    private func backend(of pool: PostgresConnectionPool) async throws -> Int32 {
        try await pool.rows("SELECT pg_backend_pid()", logger: logger)[0].decode(Int32.self)
    }
}
