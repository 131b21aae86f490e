import Foundation
import GRDB

/// Values of the store's own tables read by column name. A value this version does not know (a
/// kind, a state, a time that does not parse) is ``StoreFailure/Kind/corrupt``, naming the table and
/// column: never taken for a default, so a damaged or newer store is said rather than misread.
enum StoredValue {
    /// The value of `column` as one of `Value`'s cases.
    static func known<Value: RawRepresentable<String>>(_ row: Row, _ column: String, of table: String) throws -> Value {
        let text: String? = row[column]
        guard let text, let value = Value(rawValue: text) else { throw corrupt(table, column, text) }
        return value
    }

    /// The time in `column`.
    static func time(_ row: Row, _ column: String, of table: String) throws -> Date {
        let text: String? = row[column]
        guard let date = Timestamp.date(text) else { throw corrupt(table, column, text) }
        return date
    }

    /// The time in `column`; nil when NULL.
    static func time(_ row: Row, _ column: String, of table: String) throws -> Date? {
        let text: String? = row[column]
        guard let text else { return nil }
        guard let date = Timestamp.date(text) else { throw corrupt(table, column, text) }
        return date
    }

    /// The failure of `table`.`column` holding `text`, which this version does not know.
    static func corrupt(_ table: String, _ column: String, _ text: String?) -> StoreFailure {
        StoreFailure(
            kind: .corrupt,
            detail: "\(table).\(column) holds \(text.map { "'\($0)'" } ?? "NULL"), which this version does not know")
    }
}
