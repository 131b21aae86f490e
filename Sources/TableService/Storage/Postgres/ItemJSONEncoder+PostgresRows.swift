import Foundation
import NIOCore
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
            case let name where name.hasPrefix(SchemaChangePlanner.retiredPrefix): continue
            case BackfillMarker.column: continue
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

/// Pages straight from PostgreSQL rows to JSON bytes: the hot path of a list request (a thousand
/// rows) builds no item per row and copies text from the row's buffer. The bytes are the ones
/// ``ItemJSONEncoder/append(_:to:)`` writes for ``StoredItem/init(_:)`` of the same row.
extension ItemJSONEncoder {
    /// How each column of a result is written; made from a page's first row (every row of one
    /// result has the same columns).
    struct PostgresLayout {
        /// What a column is, by its position in the row.
        enum Role {
            case id, createdAt, updatedAt, version, deleted
            /// The hidden owner column, never written.
            case skipped
            /// A user column: `,"name":` and how its value is written.
            case user(key: [UInt8], kind: Kind)
        }

        /// How a user column's value is written.
        enum Kind {
            /// Text (in the binary format, its UTF-8 bytes), a JSON string.
            case text
            /// A number of any PostgreSQL numeric type, written as ``JSONValue/number(_:)``.
            case number
            /// A boolean.
            case boolean
        }

        let roles: [Role]

        /// The layout of `row`'s result, `nil` unless the system columns come first and in the
        /// protocol's order (as the store creates tables) and every column is in the binary format;
        /// other rows are encoded through ``StoredItem``.
        init?(_ row: PostgresRow) {
            let system =
                [SystemColumn.id, SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version]
                + [SystemColumn.deleted]
            let systemRoles: [Role] = [.id, .createdAt, .updatedAt, .version, .deleted]
            var roles: [Role] = []
            for cell in row {
                guard cell.format == .binary else { return nil }
                if cell.columnIndex < system.count {
                    guard cell.columnName == system[cell.columnIndex] else { return nil }
                    roles.append(systemRoles[cell.columnIndex])
                    continue
                }
                switch cell.columnName {
                case SystemColumn.id, SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version,
                    SystemColumn.deleted:
                    return nil
                case RowScope.ownerColumn:
                    roles.append(.skipped)
                case let name where name.hasPrefix(SchemaChangePlanner.retiredPrefix):
                    roles.append(.skipped)
                case BackfillMarker.column:
                    roles.append(.skipped)
                default:
                    var key = Array(",".utf8)
                    JSONValue.writeString(cell.columnName, to: &key)
                    key.append(UInt8(ascii: ":"))
                    switch cell.dataType {
                    case .float8, .float4, .int8, .int4, .int2, .numeric: roles.append(.user(key: key, kind: .number))
                    case .bool: roles.append(.user(key: key, kind: .boolean))
                    default: roles.append(.user(key: key, kind: .text))
                    }
                }
            }
            guard roles.count >= system.count else { return nil }
            self.roles = roles
        }
    }

    /// Whether rows can go through ``append(row:layout:to:)``: v2 or v3, every column.
    var writesRowsDirectly: Bool { (style == .v2 || style == .v3) && selection == nil }

    /// Appends the item in one PostgreSQL row, through ``StoredItem`` (any style and selection).
    func append(row: PostgresRow, to bytes: inout [UInt8]) throws {
        append(try StoredItem(row), to: &bytes)
    }

    /// Appends the item in one row of the result `layout` was made for (v2 or v3, every column).
    func append(row: PostgresRow, layout: PostgresLayout, to bytes: inout [UInt8]) throws {
        for cell in row {
            switch layout.roles[cell.columnIndex] {
            case .id:
                bytes += Self.idKey
                try Self.appendText(cell, to: &bytes)
            case .createdAt:
                guard style == .v2 else { continue }
                bytes += Self.createdAtKey
                ProtocolDate.append(milliseconds: try cell.decode(Int64.self), to: &bytes)
            case .updatedAt:
                bytes += style == .v2 ? Self.updatedAtKey : Self.firstUpdatedAtKey
                ProtocolDate.append(milliseconds: try cell.decode(Int64.self), to: &bytes)
            case .version:
                bytes += Self.versionKey
                try Self.appendText(cell, to: &bytes)
            case .deleted:
                bytes += try cell.decode(Bool.self) ? Self.deletedTrue : Self.deletedFalse
            case .skipped:
                continue
            case .user(let key, let kind):
                bytes += key
                guard cell.bytes != nil else {
                    bytes += Self.null
                    continue
                }
                switch kind {
                case .text: try Self.appendText(cell, to: &bytes)
                case .number: JSONValue.number(try cell.decode(Double.self)).write(to: &bytes)
                case .boolean: bytes += try cell.decode(Bool.self) ? Self.trueBytes : Self.falseBytes
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A text cell (binary format: its UTF-8 bytes) as a JSON string, copied from the row's buffer
    /// when it needs no escaping.
    private static func appendText(_ cell: PostgresCell, to bytes: inout [UInt8]) throws {
        guard let buffer = cell.bytes else { return bytes += null }
        let copied = buffer.withUnsafeReadableBytes { raw -> Bool in
            if raw.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                return false
            }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: raw)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !copied { JSONValue.writeString(try cell.decode(String.self), to: &bytes) }
    }
}
