import SyncProtocol

/// What a person typed for a column (a form field, `--field NAME=VALUE`) read by the column's type:
/// the CLI and the dashboard parse the same way, and refuse the same values.
///
/// | type | accepted | refused |
/// |---|---|---|
/// | text | anything | — |
/// | integer | `12`, `-3` | `abc`, `1.5` |
/// | real | `12.5`, `13` | `abc`, `nan` |
/// | boolean | `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`) | `maybe` |
/// | date | `2026-12-01T09:30:00.000Z`, `2026-12-01T09:30`, `2026-12-01` (UTC) | `2026-13-45` |
/// | json | any JSON text | `{oops` |
/// | a new column, or one of nulls | `true`/`false`, a number, a date as above, else text | — |
///
/// `null` (exactly) is null for every type but text, where an empty value is the empty string.
public enum ColumnInput {
    /// The value of `text` for a column of `type` (nil: a column the table does not have yet).
    public static func value(
        _ text: String, as type: TableDescription.ColumnType?
    ) throws(ColumnInputError)
        -> JSONValue
    {
        let refused = ColumnInputError(column: "", type: type ?? .null, text: text)
        guard let type, type != .null else { return guessed(text) }
        if text == "null", type != .text { return .null }
        switch type {
        case .text: return .string(text)
        case .integer:
            guard let number = Int64(text.trimmingCharacters(in: .whitespaces)), abs(number) < 9_000_000_000_000_000
            else { throw refused }
            return .number(Double(number))
        case .real:
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else { throw refused }
            return .number(number)
        case .boolean:
            guard let flag = boolean(text) else { throw refused }
            return .bool(flag)
        case .date:
            guard let date = date(text) else { throw refused }
            return .string(date)
        case .json:
            guard let value = ItemCoding.value(text) else { throw refused }
            return value
        case .null: return guessed(text)
        }
    }

    /// The value of `text` for the column `column` of `table`: ``value(_:as:)`` with the error naming
    /// the column.
    public static func value(
        _ text: String, column: String, of table: TableDescription
    ) throws(ColumnInputError)
        -> JSONValue
    {
        do { return try value(text, as: table.columnType(column)) } catch {
            throw ColumnInputError(column: column, type: error.type, text: text)
        }
    }

    /// The text a form shows for a stored value (what ``value(_:as:)`` reads back as the same value).
    public static func text(_ value: JSONValue?, as type: TableDescription.ColumnType?) -> String {
        switch value {
        case nil, .null?: return ""
        case .string(let text)?: return text
        case .bool(let flag)?: return flag ? "true" : "false"
        case .number?, .array?, .object?: return value!.description
        }
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }

    /// The protocol's form of a date typed as `2026-12-01`, `2026-12-01T09:30[:00[.000]]` with `Z`,
    /// an offset or nothing (UTC); nil when it is no real date.
    private static func date(_ text: String) -> String? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.utf8.count == 10 { text += "T00:00:00.000Z" }
        guard text.utf8.count >= 16, let milliseconds = ProtocolDate.parse(text) else { return nil }
        return ProtocolDate.format(milliseconds: milliseconds)
    }

    /// A value for a column with no type yet: a flag, a number or a date when it reads as one.
    private static func guessed(_ text: String) -> JSONValue {
        if text == "null" { return .null }
        if let flag = ["true": true, "false": false][text] { return .bool(flag) }
        if let number = Double(text), number.isFinite, text.first.map({ $0.isNumber || $0 == "-" }) == true {
            return .number(number)
        }
        if text.utf8.count >= 10, text.first?.isNumber == true, let date = date(text) { return .string(date) }
        return .string(text)
    }
}

/// A typed value that does not fit its column: which column, its type, and what was typed.
public struct ColumnInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The column.
    public var column: String
    /// The column's type.
    public var type: TableDescription.ColumnType
    /// What was typed.
    public var text: String

    /// What was wrong and what fits instead.
    public var description: String {
        let wanted =
            switch type {
            case .integer: "a whole number such as 12"
            case .real: "a number such as 12.5"
            case .boolean: "true or false"
            case .date: "a date such as 2026-12-01 or 2026-12-01T09:30:00.000Z"
            case .json: "JSON such as {\"a\": 1}"
            case .text, .null: "text"
            }
        return "“\(text)” is not a value for \(column.isEmpty ? "this column" : "'\(column)'") (\(type.rawValue)): "
            + "give \(wanted), or null."
    }
}
