/// A parsed OData v3 `$filter`: the tree that ``FilterParser`` builds and ``FilterCompiler`` turns
/// into parameterised SQL.
indirect enum FilterExpression: Equatable, Sendable {
    case literal(FilterLiteral)
    /// A property name and where it starts in the filter text (for error messages).
    case member(String, position: Int)
    case call(FilterFunction, [FilterExpression], position: Int)
    case comparison(ComparisonOperator, FilterExpression, FilterExpression)
    /// `add sub mul div mod` on numbers.
    case arithmetic(ArithmeticOperator, FilterExpression, FilterExpression)
    /// `value in (a, b, …)`.
    case isIn(FilterExpression, [FilterExpression])
    case and(FilterExpression, FilterExpression)
    case or(FilterExpression, FilterExpression)
    case not(FilterExpression)
}

/// A constant in a filter.
enum FilterLiteral: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    /// `datetimeoffset'…'` or `datetime'…'`, as milliseconds since 1970 (UTC).
    case date(Int64)
    /// A date without time (`2026-01-31`, or `cast(2026-01-31,Edm.Date)`), as `yyyy-MM-dd`.
    case dateOnly(String)
    /// A time of day (`14:30:00`, or `cast(14:30:00,Edm.TimeOfDay)`), as `HH:mm:ss.fff`.
    case timeOfDay(String)
}

/// `add sub mul div mod`.
enum ArithmeticOperator: String, CaseIterable, Sendable {
    case add, sub, mul, div, mod

    /// The SQL operator.
    var sql: String {
        switch self {
        case .add: "+"
        case .sub: "-"
        case .mul: "*"
        case .div: "/"
        case .mod: "%"
        }
    }
}

/// `eq ne gt ge lt le`.
enum ComparisonOperator: String, CaseIterable, Sendable {
    case eq, ne, gt, ge, lt, le

    /// The operator with its operands swapped (`a lt b` ⇔ `b gt a`).
    var swapped: ComparisonOperator {
        switch self {
        case .eq, .ne: self
        case .gt: .lt
        case .ge: .le
        case .lt: .gt
        case .le: .ge
        }
    }
}

/// The functions a filter may call: on text, on numbers, and the parts of dates and times.
enum FilterFunction: String, CaseIterable, Sendable {
    case startswith, endswith, substringof, contains, tolower, toupper, length, trim, indexof
    case ceiling, floor, round
    case year, month, day, hour, minute, second

    /// How many arguments the function takes.
    var arity: Int {
        switch self {
        case .startswith, .endswith, .substringof, .contains, .indexof: 2
        case .tolower, .toupper, .length, .trim, .ceiling, .floor, .round: 1
        case .year, .month, .day, .hour, .minute, .second: 1
        }
    }
}
