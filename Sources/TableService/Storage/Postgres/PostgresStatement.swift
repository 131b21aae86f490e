import PostgresNIO

/// SQL for PostgreSQL with its values bound as `$1, $2…`, built piece by piece.
struct PostgresStatement: Sendable {
    var sql = ""
    private(set) var values: [SQLValue] = []

    /// Binds `value` and returns its placeholder.
    mutating func bind(_ value: SQLValue) -> String {
        values.append(value)
        return "$\(values.count)"
    }

    /// Starts the statement with a `WITH "stamp"` clause that registers the write and takes its
    /// stamp from the database's clock (``PostgresHorizon``): nothing waits for another writer.
    /// (A `given` clock stamps instead, in tests.) Returns the SQL of the stamp and of the write's
    /// version (base64 of the 8 bytes of its
    /// transaction id: unique to the write, as versions must be; stamps need not be).
    ///
    /// A `rewrite` (a write to an existing row: update, delete, undelete) also counts itself in the
    /// table's `__rewrites`, which tells ``PageCursors`` that rows may have moved. The count has a
    /// row per connection slot (`pg_backend_pid() % 64`), so rewrites on different connections
    /// seldom touch the same row; a reader sums them.
    mutating func stampCTE(table: String, given: GivenClock?, rewrite: Bool = false) -> (value: String, version: String)
    {
        let stamp = bind(given.map { .integer($0.stamp()) } ?? .null)
        sql += "WITH \"stamp\" AS (SELECT \"__todosync_stamp\"(\(stamp)::bigint) AS \"stamp\")"
        if rewrite { sql += ", \"rewrite\" AS (\(Self.countRewrite(table: bind(.text(table)))))" }
        sql += " "
        return ("(SELECT \"stamp\" FROM \"stamp\")", Self.version)
    }

    /// The version of a write: base64 of its transaction id's 8 bytes.
    static let version = "encode(int8send(pg_current_xact_id()::text::bigint), 'base64')"

    /// Counts one rewrite of the table named by the placeholder `table` (see ``stampCTE(table:rewrite:)``).
    static func countRewrite(table: String) -> String {
        "INSERT INTO \"__rewrites\" (\"name\", \"stripe\", \"count\") VALUES (\(table), pg_backend_pid() % 64, 1) "
            + "ON CONFLICT (\"name\", \"stripe\") DO UPDATE SET \"count\" = \"__rewrites\".\"count\" + 1"
    }

    /// The table's count of rewrites, for the table named by the placeholder `table`.
    static func rewrites(table: String) -> String {
        "(SELECT coalesce(sum(\"count\"), 0)::bigint FROM \"__rewrites\" WHERE \"name\" = \(table))"
    }

    /// The conditions of a write to row `id` of `target` (a quoted table name): the row, each of
    /// `versions` it must have, and its owner when `scope` has one.
    mutating func rowConditions(of target: String, id: String, versions: [String?], scope: RowScope) -> [String] {
        var conditions = ["\(target).\"id\" = \(bind(.text(id)))"]
        for version in versions.compactMap({ $0 }) {
            conditions.append("\(target).\"version\" = \(bind(.text(version)))")
        }
        if let owner = scope.owner {
            conditions.append("\(target).\(SQLDialect.quoted(RowScope.ownerColumn)) = \(bind(.text(owner)))")
        }
        return conditions
    }

    var query: PostgresQuery {
        PostgresQuery(unsafeSQL: sql, binds: Self.bindings(values))
    }

    /// The values as postgres-nio's bindings: nulls untyped (PostgreSQL takes the column's type),
    /// the others with their own type.
    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        append(values, to: &bindings)
        return bindings
    }

    /// Appends the values to `bindings`, as ``bindings(_:)`` binds them.
    static func append(_ values: [SQLValue], to bindings: inout PostgresBindings) {
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let integer): bindings.append(integer)
            case .double(let double): bindings.append(double)
            case .text(let text): bindings.append(text)
            case .bool(let bool): bindings.append(bool)
            }
        }
    }
}

extension PostgresStatement {
    /// A statement written with `?` placeholders, numbered for PostgreSQL.
    init(_ statement: SQLStatement) {
        sql = SQLDialect.postgres.numberingPlaceholders(statement.sql)
        values = statement.values
    }
}

extension SQLStatement {
    /// The statement for postgres-nio, run unprepared (as statements inside a transaction are).
    var postgresQuery: PostgresQuery { PostgresStatement(self).query }
}

extension SQLValue {
    /// A cell read back as the stores' shared code reads it, by the type PostgreSQL sent.
    init(_ cell: PostgresCell) throws {
        guard cell.bytes != nil else {
            self = .null
            return
        }
        switch cell.dataType {
        case .int2, .int4, .int8: self = .integer(try cell.decode(Int64.self))
        case .float4, .float8: self = .double(try cell.decode(Double.self))
        case .bool: self = .bool(try cell.decode(Bool.self))
        default: self = .text(try cell.decode(String.self))
        }
    }
}

extension SQLRow {
    /// A row read back by its columns' names.
    init(_ row: PostgresRow) throws {
        self.init(columns: try row.map { cell in (name: cell.columnName, value: try SQLValue(cell)) })
    }
}
