import Foundation
import PostgresNIO
import SyncProtocol

/// Positional reads below the horizon (``PostgresHorizon``).
extension PostgresTableStore {
    /// The longest a positional read waits for the writes registered before it to end, so that its
    /// answer holds every write acknowledged before it began. Past it, the read answers what is
    /// final then, and the client pulls the rest next time.
    static let freshnessWait = Duration.milliseconds(50)

    /// A reading of the horizon begun after this call (one query for the concurrent callers).
    func horizon() async throws(TableError) -> PostgresHorizon.Reading {
        do {
            return try await horizonReader.reading { try await self.readHorizon() }
        } catch let error as TableError {
            throw error
        } catch {
            throw Self.tableError(error)
        }
    }

    /// Reads the horizon from the database (``HorizonReader`` calls it).
    func readHorizon() async throws -> PostgresHorizon.Reading {
        var statement = PostgresStatement()
        let given = statement.bind(givenClock.map { .integer($0.horizonClock()) } ?? .null)
        statement.sql = "SELECT * FROM \"__todosync_horizon\"(\(given)::bigint)"
        let rows = try await values(statement) { row in
            try row.decode((Int64, Int64).self)
        }
        guard let (horizon, clock) = rows.first else { throw TableError.storage(.unavailable("no horizon")) }
        return PostgresHorizon.Reading(horizon: horizon, clockMicros: clock)
    }

    /// A horizon past the millisecond of `first` (so past every write acknowledged before `first`
    /// was read), once the writes registered before it have ended; `first`'s own when `table` has
    /// no row at or past it by `column` (nothing was left out), or after ``freshnessWait``.
    func freshHorizon(
        after first: PostgresHorizon.Reading, table: String, column: String
    ) async throws(TableError) -> Int64 {
        var reading = first
        let deadline = ContinuousClock.now + Self.freshnessWait
        while reading.horizon <= first.clockMillis, ContinuousClock.now < deadline,
            try await hasRow(in: table, column: column, atOrPast: reading.horizon)
        {
            // Until the clock leaves the millisecond, or a write under way ends.
            try? await Task.sleep(for: reading.untilNextMillisecond)
            reading = try await horizon()
        }
        return reading.horizon
    }

    private func hasRow(in table: String, column: String, atOrPast stamp: Int64) async throws(TableError) -> Bool {
        var statement = PostgresStatement()
        statement.sql =
            "SELECT EXISTS (SELECT 1 FROM \(SQLDialect.quoted(table)) WHERE \(SQLDialect.quoted(column)) >= "
            + "\(statement.bind(.integer(stamp))))"
        return try await values(statement) { row in try row.decode(Bool.self) }.first ?? false
    }

    /// The newest row of `table` that `scope` may see, below a fresh horizon: a cursor no row can
    /// commit behind.
    func latestChange(in table: String, scope: RowScope) async throws(TableError) -> ChangeCursor? {
        guard let schema = try await knownSchema(of: table) else { return nil }
        let bound = try await freshHorizon(
            after: try await horizon(), table: schema.name, column: SystemColumn.updatedAt)
        var statement = PostgresStatement()
        statement.sql =
            "SELECT \"updatedAt\", \"id\" FROM \(SQLDialect.quoted(schema.name)) "
            + "WHERE \"updatedAt\" < \(statement.bind(.integer(bound)))"
        if let owner = scope.owner {
            statement.sql += " AND \(SQLDialect.quoted(RowScope.ownerColumn)) = \(statement.bind(.text(owner)))"
        }
        statement.sql += " ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT 1"
        let rows = try await values(statement) { row in try row.decode((Int64, String).self) }
        guard let (updatedAt, id) = rows.first else { return .start }
        return ChangeCursor(updatedAt: updatedAt, id: id)
    }
}
