import Foundation
import GRDB
import SyncProtocol

/// Conversions between JSON values and the SQLite values of a column type.
enum ColumnValue {
    /// The SQLite value stored for a JSON value in a column of `type`.
    static func database(_ value: JSONValue?, as type: TableDescription.ColumnType) -> DatabaseValue {
        guard let value, value != .null else { return .null }
        switch (type, value) {
        case (.text, .string(let text)): return text.databaseValue
        case (.text, .number(let number)): return JSONValue.number(number).description.databaseValue
        case (.text, .bool(let flag)): return (flag ? "true" : "false").databaseValue
        case (.integer, .number(let number)):
            return number.rounded() == number && abs(number) < 9.2e18
                ? Int64(number).databaseValue : number.databaseValue
        case (.integer, .bool(let flag)), (.boolean, .bool(let flag)): return (flag ? 1 : 0).databaseValue
        case (.integer, .string(let text)): return (Int64(text)?.databaseValue) ?? text.databaseValue
        case (.real, .number(let number)): return number.databaseValue
        case (.real, .string(let text)): return (Double(text)?.databaseValue) ?? text.databaseValue
        case (.real, .bool(let flag)): return (flag ? 1.0 : 0.0).databaseValue
        case (.boolean, .number(let number)): return (number != 0 ? 1 : 0).databaseValue
        case (.boolean, .string(let text)): return (text == "true" || text == "1" ? 1 : 0).databaseValue
        default: return value.jsonText.databaseValue
        }
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
            if type == .json, let data = text.data(using: .utf8),
                let decoded = try? JSONDecoder().decode(JSONValue.self, from: data)
            {
                return decoded
            }
            return .string(text)
        case .blob(let data): return .string(data.base64EncodedString())
        }
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
