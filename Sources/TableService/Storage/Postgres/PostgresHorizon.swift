import Foundation
import PostgresNIO
import Synchronization

/// What lets writers of one PostgreSQL table commit side by side while incremental pull still
/// never skips a row (the design note: `IncrementalPull.md` beside `Storage/`).
///
/// - A write takes its stamp from `"__todosync_stamp"()`. The function first registers the write:
///   a shared, transaction-scoped advisory lock whose key is the database clock in milliseconds.
///   Then it reads the clock again and returns that. So a write's stamp is never below its key,
///   and the key is held until the write commits or rolls back. Shared locks never wait for one
///   another: nothing serialises the writers.
/// - A reader reads the *horizon* (`"__todosync_horizon"()`): the clock (read first), and the
///   smallest key of the writes under way (`pg_locks`). Every write that commits afterwards has a
///   stamp at or past it: a write under way has a stamp at or past its key; one that registers later
///   reads the clock later. The rows stamped below the horizon that a later snapshot shows are
///   therefore all the rows there will ever be below it.
/// - A positional read (a pull; the `$changes` cursor) answers only rows below the horizon, from a
///   snapshot taken after it was read. Its page then ends before any row that could still commit
///   behind it.
///
/// The price: a pull sees a row once every write that registered before it has ended, normally
/// a millisecond or two. A transaction left open after it took a stamp holds every pull of the
/// database back until it ends (PostgreSQL's `idle_in_transaction_session_timeout` bounds that).
enum PostgresHorizon {
    /// The advisory-lock keys of registered writes are this plus the clock in milliseconds: their
    /// high half (`pg_locks.classid`) falls in a range no milliseconds of ours leave, and that
    /// other users of advisory locks are unlikely to touch.
    static let keyBase: Int64 = 1 << 62

    /// The functions (one statement each: an extended-protocol query takes one).
    static let functionsSQL = [
        """
        CREATE OR REPLACE FUNCTION "__todosync_stamp"("given" bigint DEFAULT NULL) RETURNS bigint
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(
                \(keyBase) + coalesce("given", floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint));
            RETURN coalesce("given", floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION "__todosync_horizon"("given" bigint, OUT "horizon" bigint, OUT "clock" bigint)
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            "clock" := coalesce("given" * 1000, floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
            SELECT min(("classid"::bigint << 32 | "objid"::bigint) - \(keyBase)) INTO "horizon" FROM pg_locks
             WHERE "locktype" = 'advisory' AND "objsubid" = 1
               AND "classid"::bigint >= \(keyBase >> 32) AND "classid"::bigint < \((keyBase >> 32) + (1 << 20))
               AND "database" = (SELECT "oid" FROM pg_database WHERE "datname" = current_database());
            "horizon" := least(coalesce("horizon", "clock" / 1000), "clock" / 1000);
        END $$
        """,
    ]

    /// One reading of the horizon.
    struct Reading: Sendable, Equatable {
        /// Rows stamped below it are final.
        let horizon: Int64
        /// The database's clock when it was read, in microseconds.
        let clockMicros: Int64

        /// The millisecond the clock was in.
        var clockMillis: Int64 { clockMicros / 1000 }

        /// How long until the clock leaves that millisecond (at least 0.1 ms): when to read the
        /// horizon again for it to have moved.
        var untilNextMillisecond: Duration { .microseconds(max(100, 1000 - clockMicros % 1000)) }
    }
}

/// Stamps from a clock the service was given instead of the database's, for tests that replay a
/// timeline (``TableService/Configuration/clock``) on one instance. Stamps are the clock, or one
/// past the last stamp when the clock is not ahead of it (a clock that stands still still stamps
/// each write past the last), and a horizon reads the clock as the next stamp, so a read answers
/// every write made before it.
final class GivenClock: Sendable {
    /// The last stamp taken.
    private let issued = Mutex<Int64>(0)
    let now: @Sendable () -> Int64

    init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// The stamp of a write.
    func stamp() -> Int64 {
        issued.withLock { issued in
            issued = max(issued + 1, now())
            return issued
        }
    }

    /// The clock a horizon reads: the next stamp, without taking it.
    func horizonClock() -> Int64 {
        issued.withLock { issued in max(issued + 1, now()) }
    }
}

/// Reads the horizon for this instance's requests, one query for all the requests that ask while
/// one is under way: each gets a reading begun after it asked (so it covers every write
/// acknowledged before), and a burst of requests (10,000 subscribers woken at once) costs two
/// queries, not one each.
final class HorizonReader: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<PostgresHorizon.Reading, any Error>
    }

    private struct State {
        var running: Flight?
        /// The reading that starts when the running one ends: it began after its callers asked.
        var queued: Flight?
        /// The callers waiting for ``queued``.
        var queuedCallers = 0
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// How many callers wait for the reading that starts when the one under way ends.
    var callersWaitingForNext: Int { state.withLock { $0.queuedCallers } }

    /// A reading begun after this call, made by `read` (or by another caller's: they read alike).
    func reading(
        _ read: @escaping @Sendable () async throws -> PostgresHorizon.Reading
    ) async throws
        -> PostgresHorizon.Reading
    {
        let task = state.withLock { state -> Task<PostgresHorizon.Reading, any Error> in
            if let queued = state.queued {
                state.queuedCallers += 1
                return queued.task
            }
            state.lastID += 1
            let id = state.lastID
            // Unstructured: the reading belongs to every caller that joins it, not to the first.
            // One begun while another runs waits for that one's end, then runs.
            let before = state.running
            let task = Task {
                _ = try? await before?.task.value
                return try await self.run(id, promoting: before != nil, read)
            }
            if before == nil {
                state.running = Flight(id: id, task: task)
            } else {
                state.queued = Flight(id: id, task: task)
                state.queuedCallers = 1
            }
            return task
        }
        return try await task.value
    }

    private func run(
        _ id: UInt64, promoting: Bool, _ read: @Sendable () async throws -> PostgresHorizon.Reading
    ) async throws -> PostgresHorizon.Reading {
        if promoting {
            state.withLock { state in
                if state.queued?.id == id {
                    state.running = state.queued
                    state.queued = nil
                    state.queuedCallers = 0
                }
            }
        }
        defer { state.withLock { state in if state.running?.id == id { state.running = nil } } }
        return try await read()
    }
}
