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

    /// Starts the statement with a `WITH "stamp"` clause that takes `table`'s next stamp: one past
    /// the last, or the writer's clock if that is later. The `UPDATE` locks the table's row in
    /// `__tables` until the statement's transaction commits, so concurrent writers of one table
    /// (on any instance) take stamps one after another, each after the previous one committed.
    /// Returns the SQL of the stamp and of the version made from it (base64 of its 8 big-endian
    /// bytes, as ``StoredItem/version(for:)`` makes it).
    ///
    /// A `rewrite` (a write to an existing row: update, delete, undelete) also counts itself in the
    /// table's `rewrites`, which tells ``PageCursors`` that rows may have moved.
    mutating func stampCTE(table: String, clock: Int64, rewrite: Bool = false) -> (value: String, version: String) {
        let now = bind(.integer(clock))
        let name = bind(.text(table))
        sql +=
            "WITH \"stamp\" AS (UPDATE \"__tables\" SET \"stamp\" = greatest(\"stamp\" + 1, \(now))"
            + (rewrite ? ", \"rewrites\" = \"rewrites\" + 1" : "")
            + " WHERE \"name\" = \(name) RETURNING \"stamp\") "
        return (
            "(SELECT \"stamp\" FROM \"stamp\")", "(SELECT encode(int8send(\"stamp\"), 'base64') FROM \"stamp\")"
        )
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
