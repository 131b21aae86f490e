/// What differs between the SQL that SQLite and PostgreSQL accept, for the statements the table
/// service compiles: placeholders, booleans, null-safe comparison, string functions and the
/// default order of rows. Everything else the compiler writes is plain SQL both understand.
enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// `name` as a quoted identifier (`"na""me"`); both databases quote the same way.
    static func quoted(_ name: String) -> String {
        // By hand: Foundation's `replacingOccurrences` (an NSString round trip) took a tenth of a
        // SQLite insert's CPU, for names that in practice never hold a quote.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        var quoted = "\""
        for scalar in name.unicodeScalars {
            if scalar == "\"" { quoted.unicodeScalars.append(scalar) }
            quoted.unicodeScalars.append(scalar)
        }
        quoted.unicodeScalars.append("\"")
        return quoted
    }

    /// SQL written with `?` placeholders in this dialect: SQLite keeps `?`, PostgreSQL numbers
    /// them `$1, $2…`. Question marks inside quoted identifiers are left alone (the compiler never
    /// writes a string literal, so identifiers are the only quoted text).
    func numberingPlaceholders(_ sql: String) -> String {
        guard self == .postgres else { return sql }
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var inIdentifier = false
        var number = 0
        for character in sql {
            if character == "\"" { inIdentifier.toggle() }
            if character == "?", !inIdentifier {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A boolean column or expression used as a condition (SQLite keeps booleans as 0/1).
    func isTrue(_ sql: String) -> String {
        switch self {
        case .sqlite: "(\(sql) = 1)"
        case .postgres: "(\(sql) IS TRUE)"
        }
    }

    /// `NOT condition`, where a null condition counts as false.
    func not(_ sql: String) -> String {
        switch self {
        case .sqlite: "(NOT coalesce(\(sql), 0))"
        case .postgres: "(NOT coalesce(\(sql), FALSE))"
        }
    }

    /// The operator of OData's `ne`: true when one side is null and the other is not.
    var distinctOperator: String {
        switch self {
        case .sqlite: "IS NOT"
        case .postgres: "IS DISTINCT FROM"
        }
    }

    /// The condition that hides soft-deleted rows.
    var liveCondition: String {
        switch self {
        case .sqlite: "\"deleted\" = 0"
        case .postgres: "NOT \"deleted\""
        }
    }

    /// OData arithmetic: `div` of two whole numbers truncates, as OData (and C#) divide integers,
    /// and a division or remainder by zero is null in both databases (PostgreSQL would fail the
    /// query). PostgreSQL keeps numbers as double precision, so it truncates and takes the
    /// remainder explicitly.
    func arithmetic(_ op: ArithmeticOperator, _ left: String, _ right: String, integers: Bool) -> String {
        switch (self, op) {
        case (_, .add), (_, .sub), (_, .mul): "(\(left) \(op.sql) \(right))"
        case (.sqlite, .div) where integers: "(CAST(\(left) AS INTEGER) / CAST(\(right) AS INTEGER))"
        case (.sqlite, .div): "(CAST(\(left) AS REAL) / \(right))"
        case (.sqlite, .mod): "(\(left) % \(right))"
        case (.postgres, .div) where integers: "trunc(\(left) / NULLIF(\(right), 0))"
        case (.postgres, .div): "(\(left) / NULLIF(\(right), 0))"
        case (.postgres, .mod):
            "mod(CAST(\(left) AS numeric), NULLIF(CAST(\(right) AS numeric), 0))"
        }
    }

    /// The 1-based position of `needle` in `haystack`, 0 when absent.
    func position(of needle: String, in haystack: String) -> String {
        switch self {
        case .sqlite: "instr(\(haystack), \(needle))"
        case .postgres: "strpos(\(haystack), \(needle))"
        }
    }

    /// The last `length` characters of `text` (SQLite's negative substring start).
    func suffix(of text: String, length: String) -> String {
        switch self {
        case .sqlite: "substr(\(text), -\(length))"
        case .postgres: "right(\(text), \(length))"
        }
    }

    /// Rows in the order they were first inserted, when a query has no `$orderby`: SQLite's rowid;
    /// in PostgreSQL `createdAt`, which the store stamps strictly increasing per table.
    var insertionOrder: String {
        switch self {
        case .sqlite: "rowid"
        case .postgres: "\"createdAt\", \"id\""
        }
    }
}
