import PostgresNIO
import Synchronization

/// The statements a store runs again and again (the write of each table and set of columns, the
/// read of one item), run as prepared statements: PostgreSQL parses and plans each once per
/// connection instead of once per request, which is most of its work for a one-row write.
///
/// postgres-nio prepares a ``PostgresPreparedStatement`` on a connection the first time it runs
/// there, keyed by the type's static `name` and `sql`. Our statements are built at run time (tables
/// and columns are dynamic), so ``RuntimeStatement`` reads both from a task-local value that
/// ``rows(_:on:logger:)`` sets around the call; each distinct SQL and list of value types gets a
/// name of its own, for the life of the process.
final class PreparedStatements: Sendable {
    /// The most statements given a name; past it, statements run unprepared (so that clients
    /// writing ever new sets of columns cannot fill every connection with plans).
    static let capacity = 500

    private struct Key: Hashable {
        let sql: String
        let types: [SQLValue.Kind]
    }

    private struct State {
        var names: [Key: String] = [:]
        var issued = 0
    }

    private let state = Mutex(State())

    /// The name `statement` is prepared under, `nil` when no more statements are prepared or it
    /// has more values than the protocol carries: postgres-nio's prepared path does not check
    /// that (its encoder traps), while its unprepared one refuses it as `tooManyParameters`.
    func name(for statement: PostgresStatement) -> String? {
        guard statement.values.count <= Int(UInt16.max) else { return nil }
        let key = Key(sql: statement.sql, types: statement.values.map(\.kind))
        return state.withLock { state in
            if let name = state.names[key] { return name }
            guard state.names.count < Self.capacity else { return nil }
            state.issued += 1
            let name = "todosync_\(state.issued)"
            state.names[key] = name
            return name
        }
    }

    /// Forgets the name of `statement`: its next run prepares it again under a new name. Needed when
    /// PostgreSQL refuses a prepared `SELECT *` or `RETURNING *` whose table gained a column
    /// ("cached plan must not change result type").
    func forget(_ statement: PostgresStatement) {
        let key = Key(sql: statement.sql, types: statement.values.map(\.kind))
        state.withLock { _ = $0.names.removeValue(forKey: key) }
    }

    /// Runs `statement` prepared (or unprepared past ``capacity``) and returns its rows. A
    /// statement whose table changed shape since it was prepared is prepared again; if the table
    /// changes shape again before that runs (other instances adding columns), it runs unprepared,
    /// which PostgreSQL plans afresh. PostgreSQL refuses such a plan before executing it, so a
    /// write is never applied twice.
    func rows(
        _ statement: PostgresStatement, on pool: PostgresConnectionPool, logger: Logger
    ) async throws -> [PostgresRow] {
        for _ in 1...2 {
            guard let name = name(for: statement) else {
                return try await pool.rows(statement.query, logger: logger)
            }
            let prepared = RuntimeStatement(bindings: PostgresStatement.bindings(statement.values))
            do {
                return try await RuntimeStatement.$current.withValue((name, statement.sql)) {
                    try await pool.withConnection { connection in
                        var rows: [PostgresRow] = []
                        for try await row in try await connection.execute(prepared, logger: logger) { rows.append(row) }
                        return rows
                    }
                }
            } catch let error as PSQLError where PostgresTableStore.isStalePreparedPlan(error) {
                forget(statement)
            }
        }
        return try await pool.rows(statement.query, logger: logger)
    }
}

/// A statement whose SQL is known only at run time, for postgres-nio's prepared-statement API
/// (see ``PreparedStatements``).
struct RuntimeStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow

    /// The name and SQL of the statement being run by this task.
    @TaskLocal static var current: (name: String, sql: String) = ("", "")

    static var name: String { current.name }
    static var sql: String { current.sql }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
