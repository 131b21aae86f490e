import Foundation
import GRDB

/// Values of the store's own tables read by column name. A value this version does not know (a
/// kind, a state, a time that does not parse, a NULL where one is required) is
/// ``StoreFailure/Kind/corrupt``, naming the table and column: never taken for a default, so a
/// damaged or newer store is said rather than misread.
enum StoredValue {
    /// `text`, read from `column`, as one of `Value`'s cases.
    static func known<Value: RawRepresentable<String>>(
        _ text: String?, _ column: Column, of table: String
    ) throws
        -> Value
    {
        guard let text, let value = Value(rawValue: text) else { throw corrupt(table, column.name, text) }
        return value
    }

    /// `value`, read from `column`, which must not be NULL.
    static func present<Value>(_ value: Value?, _ column: Column, of table: String) throws -> Value {
        guard let value else { throw corrupt(table, column.name, nil) }
        return value
    }

    /// `text`, read from `column`, as a time.
    static func time(_ text: String?, _ column: Column, of table: String) throws -> Date {
        guard let date = Timestamp.date(text) else { throw corrupt(table, column.name, text) }
        return date
    }

    /// The failure of `table`.`column` holding `text`, which this version does not know.
    static func corrupt(_ table: String, _ column: String, _ text: String?) -> StoreFailure {
        StoreFailure(
            kind: .corrupt,
            detail: "\(table).\(column) holds \(text.map { "'\($0)'" } ?? "NULL"), which this version does not know")
    }
}

/// A row type of one of the store's own tables: its values are read through ``StoredValue``, with
/// the table named in the failure.
protocol StoreRecord: FetchableRecord, TableRecord {}

extension StoreRecord {
    /// The value of `column` as one of `Value`'s cases.
    static func known<Value: RawRepresentable<String>>(_ row: Row, _ column: Column) throws -> Value {
        try StoredValue.known(row[column], column, of: databaseTableName)
    }

    /// The value of `column`, which must not be NULL.
    static func required<Value: DatabaseValueConvertible>(_ row: Row, _ column: Column) throws -> Value {
        try StoredValue.present(row[column], column, of: databaseTableName)
    }

    /// The time in `column`.
    static func time(_ row: Row, _ column: Column) throws -> Date {
        try StoredValue.time(row[column], column, of: databaseTableName)
    }

    /// The time in `column`; nil when NULL.
    static func time(_ row: Row, _ column: Column) throws -> Date? {
        let text: String? = row[column]
        return try text.map { try StoredValue.time($0, column, of: databaseTableName) }
    }
}
