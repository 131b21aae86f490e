import Foundation
import GRDB
import SyncProtocol

/// Values between SQLite's and the service's: statement arguments, rows as items, and a column's
/// value as JSON.
extension SQLiteTableStore {
    static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let bool): bool.databaseValue
        case .text(let string): string.databaseValue
        case .integer(let integer): integer.databaseValue
        case .double(let double): double.databaseValue
        }
    }

    /// A value read back as the stores' shared code reads it (a blob, which no table of theirs
    /// holds, as base64 text).
    static func sqlValue(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let double): .double(double)
        case .string(let string): .text(string)
        case .blob(let data): .text(data.base64EncodedString())
        }
    }

    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(positional: values.map(databaseValue))
    }

    /// A row selected with the schema's ``TableSchema/selectList`` as an item.
    static func item(from row: Row, _ schema: TableSchema) -> StoredItem {
        let fields = schema.userColumns.indices.map { index in
            let column = schema.columns[index]
            return StoredItem.Field(name: column.name, value: jsonValue(row[index], in: column))
        }
        return StoredItem(
            id: row[0], createdAt: row[1], updatedAt: row[2], version: row[3], deleted: row[4], fields: fields)
    }

    /// A value of a user column, as written or as read, as JSON: booleans are kept as 0 and 1, and
    /// text ends at its first NUL character, where GRDB's reading of it (a C string) ends.
    static func jsonValue(_ value: DatabaseValue, in column: Column) -> JSONValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): column.type == .boolean ? .bool(integer != 0) : .number(Double(integer))
        case .double(let double): .number(double)
        case .string(let string) where string.utf8.contains(0):
            .string(String(decoding: string.utf8.prefix { $0 != 0 }, as: UTF8.self))
        case .string(let string): .string(string)
        case .blob(let data): .string(data.base64EncodedString())
        }
    }
}

extension SQLRow {
    /// A row read back by its columns' names.
    init(_ row: Row) {
        self.init(columns: row.map { (name: $0.0, value: SQLiteTableStore.sqlValue($0.1)) })
    }
}
