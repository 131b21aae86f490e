import SyncProtocol

/// Turns a ``FilterExpression`` into a parameterised SQL condition over the known columns of one
/// table, in the store's ``SQLDialect``. Values are always bound as arguments, never written into
/// the SQL; names come only from the schema and are quoted.
struct FilterCompiler {
    /// A compiled piece of SQL and what kind of value it yields.
    struct Fragment {
        enum Kind: Equatable {
            case string, number, boolean, date, null
            /// A column that has only held nulls: compares with anything.
            case unknown
            /// A true/false condition (a comparison, a logical operator, `startswith`…).
            case condition
        }

        var sql: String
        var arguments: [SQLValue]
        var kind: Kind
        /// The declared type of a column, or of a date or time literal (for `year()`, `hour()`…).
        var declared: DeclaredType? = nil
        /// Whether the value is a whole number by type (a declared integer column, an integer
        /// literal, or arithmetic on them), so that `div` divides as integers do.
        var isInteger = false
    }

    /// Finds the column a name in the filter refers to.
    let resolve: (String) -> Column?
    /// The table, for messages.
    let schema: TableSchema
    /// The database the SQL is for.
    let dialect: SQLDialect

    /// The SQL condition for `expression`.
    func compile(_ expression: FilterExpression) throws(TableError) -> (sql: String, arguments: [SQLValue]) {
        let fragment = try condition(expression)
        return (fragment.sql, fragment.arguments)
    }

    /// The lowest `updatedAt` a row matching `expression` can have, when the filter implies one
    /// (as the keyset cursor does); adding it as a range condition lets SQLite start the index scan there.
    func updatedAtLowerBound(_ expression: FilterExpression) -> Int64? {
        switch expression {
        case .and(let left, let right):
            let bounds = [updatedAtLowerBound(left), updatedAtLowerBound(right)].compactMap { $0 }
            return bounds.max()
        case .or(let left, let right):
            guard let left = updatedAtLowerBound(left), let right = updatedAtLowerBound(right) else { return nil }
            return min(left, right)
        case .comparison(let op, .member(let name, _), .literal(let literal)):
            return bound(op, name, literal)
        case .comparison(let op, .literal(let literal), .member(let name, _)):
            return bound(op.swapped, name, literal)
        default:
            return nil
        }
    }

    private func bound(_ op: ComparisonOperator, _ name: String, _ literal: FilterLiteral) -> Int64? {
        guard resolve(name)?.name == SystemColumn.updatedAt, [.eq, .gt, .ge].contains(op) else { return nil }
        switch literal {
        case .date(let milliseconds): return milliseconds
        case .string(let text): return ProtocolDate.parse(text)
        default: return nil
        }
    }

    // MARK: Expressions

    private func condition(_ expression: FilterExpression) throws(TableError) -> Fragment {
        let fragment = try compileExpression(expression)
        switch fragment.kind {
        case .condition: return fragment
        case .boolean:
            return Fragment(sql: dialect.isTrue(fragment.sql), arguments: fragment.arguments, kind: .condition)
        case .unknown:
            let sql = typed(fragment.sql, as: .boolean)
            return Fragment(sql: dialect.isTrue(sql), arguments: fragment.arguments, kind: .condition)
        default:
            throw TableError.invalidQuery(
                "The $filter uses \(describe(expression)) as a condition; compare it with eq, ne, gt, ge, lt or le.")
        }
    }

    private func compileExpression(_ expression: FilterExpression) throws(TableError) -> Fragment {
        switch expression {
        case .literal(let literal):
            return literalFragment(literal)
        case .member(let name, let position):
            guard let column = resolve(name) else {
                throw TableError.invalidQuery(
                    "The $filter names an unknown column '\(name)' at position \(position); the columns of table "
                        + "'\(schema.name)' are \(schema.columnList).")
            }
            let kind: Fragment.Kind =
                switch column.type {
                case .string: .string
                case .number: .number
                case .boolean: .boolean
                case .date: .date
                case .unknown: .unknown
                }
            return Fragment(
                sql: SQLDialect.quoted(column.name), arguments: [], kind: kind, declared: column.declared,
                isInteger: column.declared == .integer)
        case .and, .or:
            // A chain `a and b and c` is one flat SQL list, not nested parentheses: SQLite's parser
            // stack holds about 100 levels, and real clients send long `id eq ... or id eq ...` lists.
            let isAnd = if case .and = expression { true } else { false }
            var parts: [Fragment] = []
            for operand in Self.chain(expression, and: isAnd) { parts.append(try condition(operand)) }
            return Fragment(
                sql: "(" + parts.map(\.sql).joined(separator: isAnd ? " AND " : " OR ") + ")",
                arguments: parts.flatMap(\.arguments), kind: .condition)
        case .not(let operand):
            let operand = try condition(operand)
            return Fragment(sql: dialect.not(operand.sql), arguments: operand.arguments, kind: .condition)
        case .comparison(let op, let left, let right):
            return try comparison(op, left, right)
        case .call(let function, let arguments, let position):
            return try call(function, arguments, position)
        case .arithmetic(let op, let left, let right):
            return try arithmetic(op, left, right)
        case .isIn(let value, let list):
            var parts: [Fragment] = []
            for candidate in list { parts.append(try comparison(.eq, value, candidate)) }
            return Fragment(
                sql: "(" + parts.map(\.sql).joined(separator: " OR ") + ")", arguments: parts.flatMap(\.arguments),
                kind: .condition)
        }
    }

    private func arithmetic(
        _ op: ArithmeticOperator, _ leftExpression: FilterExpression, _ rightExpression: FilterExpression
    ) throws(TableError) -> Fragment {
        var operands: [Fragment] = []
        for expression in [leftExpression, rightExpression] {
            operands.append(
                try number(expression) {
                    "The $filter uses \(describe(expression)) (\($0)) in '\(op.rawValue)', which takes numbers."
                })
        }
        let (left, right) = (operands[0], operands[1])
        let integers = left.isInteger && right.isInteger
        let sql = dialect.arithmetic(op, left.sql, right.sql, integers: integers)
        return Fragment(sql: sql, arguments: left.arguments + right.arguments, kind: .number, isInteger: integers)
    }

    /// The operands of a chain of `and` (or of `or`) nodes, left to right, without recursion.
    private static func chain(_ expression: FilterExpression, and: Bool) -> [FilterExpression] {
        var operands: [FilterExpression] = []
        var pending = [expression]
        while let next = pending.popLast() {
            if and, case .and(let left, let right) = next {
                pending += [right, left]
            } else if !and, case .or(let left, let right) = next {
                pending += [right, left]
            } else {
                operands.append(next)
            }
        }
        return operands
    }

    private func literalFragment(_ literal: FilterLiteral) -> Fragment {
        switch literal {
        case .null: Fragment(sql: "NULL", arguments: [], kind: .null)
        case .bool(let value): Fragment(sql: "?", arguments: [.bool(value)], kind: .boolean)
        case .integer(let value):
            Fragment(sql: "?", arguments: [.integer(Int64(value))], kind: .number, isInteger: true)
        case .double(let value): Fragment(sql: "?", arguments: [.double(value)], kind: .number)
        case .string(let value): Fragment(sql: "?", arguments: [.text(value)], kind: .string)
        case .date(let value): Fragment(sql: "?", arguments: [.integer(value)], kind: .date)
        case .dateOnly(let text): Fragment(sql: "?", arguments: [.text(text)], kind: .string, declared: .dateOnly)
        case .timeOfDay(let text): Fragment(sql: "?", arguments: [.text(text)], kind: .string, declared: .timeOfDay)
        }
    }

    private func comparison(
        _ op: ComparisonOperator, _ leftExpression: FilterExpression, _ rightExpression: FilterExpression
    )
        throws(TableError) -> Fragment
    {
        var left = try compileExpression(leftExpression)
        var right = try compileExpression(rightExpression)
        if left.kind == .null || right.kind == .null {
            let other = left.kind == .null ? right : left
            switch op {
            case .eq: return Fragment(sql: "(\(other.sql) IS NULL)", arguments: other.arguments, kind: .condition)
            case .ne: return Fragment(sql: "(\(other.sql) IS NOT NULL)", arguments: other.arguments, kind: .condition)
            default:
                throw TableError.invalidQuery(
                    "The $filter compares with null using '\(op.rawValue)'; null can only be compared with eq or ne.")
            }
        }
        // Dates: a date column against a date literal (or a string holding a date) compares milliseconds;
        // a text column against a date literal compares the canonical text form.
        try coerceDates(&left, leftExpression, against: &right, rightExpression)
        try coerceDates(&right, rightExpression, against: &left, leftExpression)
        if left.kind == .condition { left.kind = .boolean }
        if right.kind == .condition { right.kind = .boolean }
        if left.kind != right.kind, left.kind != .unknown, right.kind != .unknown {
            throw TableError.invalidQuery(
                "The $filter compares \(describe(leftExpression)) (\(name(left.kind))) with \(describe(rightExpression)) "
                    + "(\(name(right.kind))); compare values of the same type.")
        }
        if left.kind == .unknown { left.sql = typed(left.sql, as: right.kind) }
        if right.kind == .unknown { right.sql = typed(right.sql, as: left.kind) }
        let sqlOperator =
            switch op {
            case .eq: "="
            case .ne: dialect.distinctOperator
            case .gt: ">"
            case .ge: ">="
            case .lt: "<"
            case .le: "<="
            }
        return Fragment(
            sql: "(\(left.sql) \(sqlOperator) \(right.sql))", arguments: left.arguments + right.arguments,
            kind: .condition)
    }

    private func coerceDates(
        _ fragment: inout Fragment, _ expression: FilterExpression, against other: inout Fragment,
        _ otherExpression: FilterExpression
    ) throws(TableError) {
        guard fragment.kind == .date else { return }
        switch (other.kind, otherExpression) {
        case (.string, .literal(.string(let text))):
            guard let milliseconds = ProtocolDate.parse(text) else {
                throw TableError.invalidQuery(
                    "The $filter compares \(describe(expression)) with '\(text)', which is not a date; "
                        + "write datetimeoffset'2026-01-31T12:00:00.000Z'.")
            }
            other = Fragment(sql: "?", arguments: [.integer(milliseconds)], kind: .date)
        case (.string, _), (.unknown, _):
            if case .literal(.date(let milliseconds)) = expression {
                fragment = Fragment(
                    sql: "?", arguments: [.text(ProtocolDate.format(milliseconds: milliseconds))], kind: other.kind)
            }
        default:
            break
        }
    }

    private func call(
        _ function: FilterFunction, _ arguments: [FilterExpression], _ position: Int
    ) throws(TableError)
        -> Fragment
    {
        switch function {
        case .ceiling, .floor, .round:
            let a = try number(arguments[0]) {
                "\(function.rawValue) at position \(position) needs a number, but \(describe(arguments[0])) "
                    + "holds \($0)."
            }
            let sqlName = function == .round ? "round" : function == .floor ? "floor" : "ceiling"
            return Fragment(sql: "\(sqlName)(\(a.sql))", arguments: a.arguments, kind: .number)
        case .year, .month, .day, .hour, .minute, .second:
            return try datePart(function, of: arguments[0], position)
        default:
            break
        }
        var compiled: [Fragment] = []
        for (index, argument) in arguments.enumerated() {
            var fragment = try compileExpression(argument)
            if case .literal(.date(let milliseconds)) = argument {
                fragment = Fragment(
                    sql: "?", arguments: [.text(ProtocolDate.format(milliseconds: milliseconds))], kind: .string)
            }
            guard [.string, .unknown, .null].contains(fragment.kind) else {
                throw TableError.invalidQuery(
                    "\(function.rawValue) at position \(position) needs text, but argument \(index + 1) "
                        + "(\(describe(argument))) holds \(name(fragment.kind)).")
            }
            compiled.append(fragment)
        }
        let a = compiled[0]
        switch function {
        case .tolower: return Fragment(sql: "lower(\(a.sql))", arguments: a.arguments, kind: .string)
        case .toupper: return Fragment(sql: "upper(\(a.sql))", arguments: a.arguments, kind: .string)
        case .trim: return Fragment(sql: "trim(\(a.sql))", arguments: a.arguments, kind: .string)
        case .length: return Fragment(sql: "length(\(a.sql))", arguments: a.arguments, kind: .number)
        case .startswith: return positionComparison(of: compiled[1], in: a, "= 1", kind: .condition)
        case .endswith:
            let b = compiled[1]
            return Fragment(
                sql: "(length(\(b.sql)) = 0 OR \(dialect.suffix(of: a.sql, length: "length(\(b.sql))")) = \(b.sql))",
                arguments: b.arguments + a.arguments + b.arguments + b.arguments, kind: .condition)
        case .contains: return positionComparison(of: compiled[1], in: a, "> 0", kind: .condition)
        // substringof(needle, haystack): the OData v3 order.
        case .substringof: return positionComparison(of: a, in: compiled[1], "> 0", kind: .condition)
        case .indexof: return positionComparison(of: compiled[1], in: a, "- 1", kind: .number)
        case .ceiling, .floor, .round, .year, .month, .day, .hour, .minute, .second:
            preconditionFailure("handled above")
        }
    }

    /// `year()`… of a declared date, time or date-time column, stored as fixed-width text: the
    /// digits at the part's place, as a number.
    private func datePart(
        _ function: FilterFunction, of argument: FilterExpression, _ position: Int
    ) throws(TableError) -> Fragment {
        let a = try compileExpression(argument)
        // Where each part starts in `yyyy-MM-ddTHH:mm:ss.fffZ` and `HH:mm:ss.fff`.
        let start: Int?
        switch (a.declared, function) {
        case (.dateOnly, .year), (.dateTime, .year): start = 1
        case (.dateOnly, .month), (.dateTime, .month): start = 6
        case (.dateOnly, .day), (.dateTime, .day): start = 9
        case (.dateTime, .hour): start = 12
        case (.dateTime, .minute): start = 15
        case (.dateTime, .second): start = 18
        case (.timeOfDay, .hour): start = 1
        case (.timeOfDay, .minute): start = 4
        case (.timeOfDay, .second): start = 7
        default: start = nil
        }
        guard let start else {
            throw TableError.invalidQuery(
                "\(function.rawValue) at position \(position) needs a column declared as a date, time of day or "
                    + "date-time in the service's schema; \(describe(argument)) is not one that has a \(function.rawValue)."
            )
        }
        let length = function == .year ? 4 : 2
        return Fragment(
            sql: "CAST(substr(\(a.sql), \(start), \(length)) AS INTEGER)", arguments: a.arguments, kind: .number)
    }

    /// The 1-based position of `needle` in `haystack` (0 when absent) followed by `comparison`
    /// (`= 1` for a prefix, `> 0` for containment, `- 1` for OData's 0-based index).
    private func positionComparison(
        of needle: Fragment, in haystack: Fragment, _ comparison: String, kind: Fragment.Kind
    ) -> Fragment {
        Fragment(
            sql: "(\(dialect.position(of: needle.sql, in: haystack.sql)) \(comparison))",
            arguments: haystack.arguments + needle.arguments, kind: kind)
    }

    /// A column that has held only nulls, used where a value of `kind` is expected. SQLite
    /// compares anything with anything; PostgreSQL keeps such a column as text, so it is cast to
    /// the other side's type (its values are all null, so the cast never fails).
    /// `expression` as a number: a value of unknown type is cast to one, any other kind is refused
    /// with `mistake` of its kind's name.
    private func number(
        _ expression: FilterExpression, mistake: (String) -> String
    ) throws(TableError) -> Fragment {
        var fragment = try compileExpression(expression)
        switch fragment.kind {
        case .number: break
        case .unknown: fragment.sql = typed(fragment.sql, as: .number)
        default: throw .invalidQuery(mistake(name(fragment.kind)))
        }
        return fragment
    }

    private func typed(_ sql: String, as kind: Fragment.Kind) -> String {
        guard dialect == .postgres else { return sql }
        switch kind {
        case .number: return "CAST(\(sql) AS double precision)"
        case .boolean, .condition: return "CAST(\(sql) AS boolean)"
        case .date: return "CAST(\(sql) AS bigint)"
        case .string, .null, .unknown: return sql
        }
    }

    // MARK: Messages

    private func name(_ kind: Fragment.Kind) -> String {
        switch kind {
        case .string: "text"
        case .number: "a number"
        case .boolean, .condition: "a boolean"
        case .date: "a date"
        case .null: "null"
        case .unknown: "only nulls so far"
        }
    }

    private func describe(_ expression: FilterExpression) -> String {
        switch expression {
        case .member(let name, _): "'\(name)'"
        case .literal(.string(let text)): "'\(text)'"
        case .literal(.integer(let value)): "\(value)"
        case .literal(.double(let value)): "\(value)"
        case .literal(.bool(let value)): "\(value)"
        case .literal(.null): "null"
        case .literal(.date(let milliseconds)): "datetimeoffset'\(ProtocolDate.format(milliseconds: milliseconds))'"
        case .literal(.dateOnly(let text)): "the date \(text)"
        case .literal(.timeOfDay(let text)): "the time \(text)"
        case .arithmetic(let op, _, _): "a '\(op.rawValue)' expression"
        case .call(let function, _, let position): "\(function.rawValue)(…) at position \(position)"
        default: "a condition"
        }
    }
}
