import Foundation
import GRDB
import SyncProtocol

/// Conversions between JSON values and the SQLite values of a column type.
///
/// A value is stored in its column only when it fits the column's type (``fits(_:_:)``); any other
/// value is kept exactly, as JSON, in the row's ``TableDescription/mismatchesColumn`` and its column
/// holds NULL. Nothing is coerced.
enum ColumnValue {
    /// The SQLite value stored for `value` in a column of `type`; nil when it does not fit the type.
    static func stored(_ value: JSONValue?, as type: TableDescription.ColumnType) -> DatabaseValue? {
        guard let value, value != .null else { return .null }
        switch (type, value) {
        case (.text, .string(let text)): return text.databaseValue
        case (.date, .string(let text)): return isDate(text) ? text.databaseValue : nil
        case (.integer, .number(let number)): return integer(number).map(\.databaseValue)
        case (.real, .number(let number)):
            return integer(number)?.databaseValue ?? number.databaseValue
        case (.boolean, .bool(let flag)): return (flag ? 1 : 0).databaseValue
        case (.json, .array), (.json, .object): return value.jsonText.databaseValue
        default: return nil
        }
    }

    /// Whether `value` can be stored in a column of `type` as it is (null fits every type).
    static func fits(_ value: JSONValue, _ type: TableDescription.ColumnType) -> Bool {
        stored(value, as: type) != nil
    }

    /// The type a column takes from its first value other than null; nil for null.
    static func type(of value: JSONValue) -> TableDescription.ColumnType? {
        switch value {
        case .null: nil
        case .bool: .boolean
        case .number(let number): integer(number) != nil ? .integer : .real
        case .string(let text): isDate(text) ? .date : .text
        case .array, .object: .json
        }
    }

    /// The type a column of `type` takes to hold `value` without changing what it holds already:
    /// a column of nulls takes the value's type, an integer column becomes real for a fraction.
    /// Nil when the type stays (the value fits, or is kept as a mismatch).
    static func widened(_ type: TableDescription.ColumnType, for value: JSONValue) -> TableDescription.ColumnType? {
        switch (type, value) {
        case (.null, _): return Self.type(of: value)
        case (.integer, .number(let number)) where integer(number) == nil: return .real
        default: return nil
        }
    }

    /// Whether `text` is a date as the protocol writes them: `yyyy-MM-ddTHH:mm:ss.SSSZ`, a real day.
    static func isDate(_ text: String) -> Bool {
        // The shape first (cheap, and most text is no date), then a real day and time.
        var index = 0
        for byte in text.utf8 {
            let expected: UInt8? =
                switch index {
                case 4, 7: UInt8(ascii: "-")
                case 10: UInt8(ascii: "T")
                case 13, 16: UInt8(ascii: ":")
                case 19: UInt8(ascii: ".")
                case 23: UInt8(ascii: "Z")
                default: nil
                }
            if let expected {
                guard byte == expected else { return false }
            } else {
                guard (48...57).contains(byte) else { return false }
            }
            index += 1
            if index > 24 { return false }
        }
        return index == 24 && ProtocolDate.parse(text) != nil
    }

    private static func integer(_ number: Double) -> Int64? {
        number.rounded() == number && abs(number) < 9.0e15 ? Int64(number) : nil
    }

    /// The SQLite value compared with a column of `type` in a local query: the value converted to
    /// the column's type where it can be (`"12"` for a number), as the query means it.
    static func queryArgument(_ value: JSONValue, as type: TableDescription.ColumnType) -> DatabaseValue {
        if let stored = stored(value, as: type) { return stored }
        switch (type, value) {
        case (.text, .number(let number)), (.date, .number(let number)):
            return JSONValue.number(number).description.databaseValue
        case (.text, .bool(let flag)): return (flag ? "true" : "false").databaseValue
        case (.integer, .bool(let flag)), (.null, .bool(let flag)): return (flag ? 1 : 0).databaseValue
        case (.integer, .string(let text)): return (Int64(text)?.databaseValue) ?? text.databaseValue
        case (.real, .string(let text)): return (Double(text)?.databaseValue) ?? text.databaseValue
        case (.real, .bool(let flag)): return (flag ? 1.0 : 0.0).databaseValue
        case (.boolean, .number(let number)): return (number != 0 ? 1 : 0).databaseValue
        case (.boolean, .string(let text)): return (text == "true" || text == "1" ? 1 : 0).databaseValue
        case (_, .number(let number)): return number.databaseValue
        case (_, .string(let text)): return text.databaseValue
        default: return value.jsonText.databaseValue
        }
    }

    /// The SQLite value of a system column (`deleted` may come as 0 or 1 from older services).
    static func system(_ value: JSONValue?, as type: TableDescription.ColumnType) -> DatabaseValue {
        guard let value, value != .null else { return .null }
        // A text or date column keeps a text as it is, a date or not: no need to read the date.
        if case .string(let text) = value, type == .text || type == .date { return text.databaseValue }
        return queryArgument(value, as: type)
    }

    /// The JSON value of a stored SQLite value in a column of `type`.
    static func json(_ value: DatabaseValue, as type: TableDescription.ColumnType) -> JSONValue {
        switch value.storage {
        case .null: return .null
        case .int64(let number):
            return type == .boolean ? .bool(number != 0) : .number(Double(number))
        case .double(let number):
            return type == .boolean ? .bool(number != 0) : .number(number)
        case .string(let text):
            if type == .json, let decoded = ItemCoding.value(text) { return decoded }
            return .string(text)
        case .blob(let data): return .string(data.base64EncodedString())
        }
    }

    /// The row's values for `columns` (in their order), with what does not fit its column kept in
    /// the ``TableDescription/mismatchesColumn`` (whose place in `columns` gets the JSON object).
    static func row(_ item: Item, columns: [TableDescription.Column]) -> [DatabaseValue] {
        var mismatches: [String: JSONValue] = [:]
        var values = columns.map { column -> DatabaseValue in
            guard column.name != TableDescription.mismatchesColumn else { return .null }
            if SystemColumn.all.contains(column.name) { return system(item[column.name], as: column.type) }
            if let stored = stored(item[column.name], as: column.type) { return stored }
            mismatches[column.name] = item[column.name]
            return .null
        }
        // Members that cannot be columns (`rowid`...) are kept with the mismatches.
        for (name, value) in item where !TableDescription.canBeColumn(name) && name != TableDescription.mismatchesColumn
        {
            mismatches[name] = value
        }
        if !mismatches.isEmpty {
            values[TableDescription.mismatchesIndex] = JSONValue.object(mismatches).jsonText.databaseValue
        }
        return values
    }
}

/// Items stored as JSON text in the queue and error tables.
enum ItemCoding {
    static func encode(_ item: Item?) -> String? {
        guard let item else { return nil }
        return JSONValue.object(item).jsonText
    }

    static func decode(_ text: String?) -> Item? {
        text.flatMap { object(Array($0.utf8)) }
    }

    /// The JSON value written as `text`; nil when it is not JSON.
    static func value(_ text: String) -> JSONValue? {
        try? OrderedJSONParser.value(Array(text.utf8), maximumDepth: maximumDepth)
    }

    /// The body of a response as an item: a JSON object with `id` (and `version` when `requireVersion`).
    static func item(from body: Data, requireVersion: Bool = true) -> Item? {
        guard let object = object(Array(body)), object[SystemColumn.id]?.stringValue != nil else { return nil }
        if requireVersion, object[SystemColumn.version]?.stringValue == nil { return nil }
        return object
    }

    /// How deeply an item's values may nest (as deeply as Foundation's decoder allows).
    static let maximumDepth = 512

    /// The JSON object in `bytes`; nil when they are not one.
    private static func object(_ bytes: [UInt8]) -> Item? {
        guard let members = try? OrderedJSONParser.object(bytes, maximumDepth: maximumDepth) else { return nil }
        return Dictionary(members, uniquingKeysWith: { _, last in last })
    }
}

/// Timestamps of the store's own tables: ISO-8601 UTC with milliseconds, as the protocol writes them.
enum Timestamp {
    static func string(_ date: Date) -> String {
        ProtocolDate.format(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    static func date(_ text: String?) -> Date? {
        guard let text, let milliseconds = ProtocolDate.parse(text) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
