import Foundation
import SyncProtocol

/// The type a schema file (`todosync serve --schema`) gives a column. Writes must fit it; the
/// value is stored in the column's ``storage`` type, in a form that sorts and compares as the
/// type does (dates and times as fixed-width text).
enum DeclaredType: Sendable, Equatable {
    case string, integer, number, boolean
    /// ISO 8601 with milliseconds in UTC, like `updatedAt` (`2026-01-31T12:00:00.000Z`).
    case dateTime
    /// `yyyy-MM-dd` (OData `Edm.Date`).
    case dateOnly
    /// `HH:mm:ss.fff` (OData `Edm.TimeOfDay`).
    case timeOfDay
    /// One of the values, compared as strings and ordered by position.
    case enumeration([String])

    /// The stored type of the column.
    var storage: ColumnType {
        switch self {
        case .string, .dateTime, .dateOnly, .timeOfDay, .enumeration: .string
        case .integer, .number: .number
        case .boolean: .boolean
        }
    }

    /// The name in a schema file.
    var name: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .dateTime: "datetime"
        case .dateOnly: "date-only"
        case .timeOfDay: "time-of-day"
        case .enumeration: "enum"
        }
    }

    /// The type named `name` in a schema file (not `enum`, which is an object).
    init?(name: String) {
        switch name {
        case "string": self = .string
        case "integer": self = .integer
        case "number": self = .number
        case "boolean": self = .boolean
        case "datetime": self = .dateTime
        case "date-only": self = .dateOnly
        case "time-of-day": self = .timeOfDay
        default: return nil
        }
    }

    /// What a value must look like, for messages.
    var expectation: String {
        switch self {
        case .string: "a string"
        case .integer: "a whole number"
        case .number: "a number"
        case .boolean: "true or false"
        case .dateTime: "a date and time such as \"2026-01-31T12:00:00.000Z\""
        case .dateOnly: "a date such as \"2026-01-31\""
        case .timeOfDay: "a time of day such as \"14:30:00.000\""
        case .enumeration(let values): "one of " + values.map { "\"\($0)\"" }.joined(separator: ", ")
        }
    }

    /// `value` as it is stored (dates and times in their canonical form), `nil` when it does not
    /// fit the type. Null fits every type. (Beware: a bare `nil` here would be `JSONValue.null`.)
    func stored(_ value: JSONValue) -> JSONValue? {
        if value == .null { return value }
        switch (self, value) {
        case (.string, .string), (.number, .number), (.boolean, .bool): return value
        case (.integer, .number(let number)) where number.rounded() == number && abs(number) < 9_007_199_254_740_992:
            return value
        case (.dateTime, .string(let text)):
            return ProtocolDate.parse(text).map { .string(ProtocolDate.format(milliseconds: $0)) }
        case (.dateOnly, .string(let text)):
            return Self.dateOnly(text).map(JSONValue.string)
        case (.timeOfDay, .string(let text)):
            return Self.timeOfDay(text).map(JSONValue.string)
        case (.enumeration(let values), .string(let text)) where values.contains(text):
            return value
        default:
            return nil
        }
    }

    /// `yyyy-MM-dd` when `text` is a real date written so.
    static func dateOnly(_ text: String) -> String? {
        guard text.utf8.count == 10, ProtocolDate.parse(text + "T00:00Z") != nil else { return nil }
        return text
    }

    /// `HH:mm:ss.fff` for a time written `HH:mm`, `HH:mm:ss` or `HH:mm:ss.f…` (digits past
    /// milliseconds are dropped).
    static func timeOfDay(_ text: String) -> String? {
        guard let milliseconds = ProtocolDate.parse("1970-01-01T" + text + "Z"), text.utf8.count >= 5 else {
            return nil
        }
        let full = ProtocolDate.format(milliseconds: milliseconds)
        return String(full.dropFirst(11).dropLast())
    }
}
