import Foundation
import PostgresNIO
import SyncProtocol

/// Items from PostgreSQL rows, read by the names and types PostgreSQL sends with them (so a
/// column another instance added is read even before this instance has learnt of it).
extension StoredItem {
    /// The item in a row of `SELECT *` (or `RETURNING *`) from a table.
    init(_ row: PostgresRow) throws {
        var id = ""
        var createdAt: Int64 = 0
        var updatedAt: Int64 = 0
        var version = ""
        var deleted = false
        var fields: [Field] = []
        for cell in row {
            switch cell.columnName {
            case SystemColumn.id: id = try cell.decode(String.self)
            case SystemColumn.createdAt: createdAt = try cell.decode(Int64.self)
            case SystemColumn.updatedAt: updatedAt = try cell.decode(Int64.self)
            case SystemColumn.version: version = try cell.decode(String.self)
            case SystemColumn.deleted: deleted = try cell.decode(Bool.self)
            case RowScope.ownerColumn: continue
            default: fields.append(Field(name: cell.columnName, value: try Self.value(of: cell)))
            }
        }
        self.init(
            id: id, createdAt: createdAt, updatedAt: updatedAt, version: version, deleted: deleted, fields: fields)
    }

    /// A user column's value as JSON, by the column's PostgreSQL type.
    static func value(of cell: PostgresCell) throws -> JSONValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .float8, .float4, .int8, .int4, .int2, .numeric: return .number(try cell.decode(Double.self))
        case .bool: return .bool(try cell.decode(Bool.self))
        default: return .string(try cell.decode(String.self))
        }
    }
}

extension ItemJSONEncoder {
    /// Appends the item in one PostgreSQL row.
    func append(row: PostgresRow, to bytes: inout [UInt8]) throws {
        append(try StoredItem(row), to: &bytes)
    }
}
