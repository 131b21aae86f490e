import Foundation
import GRDB
import SyncProtocol

/// Pages straight from SQLite rows to JSON bytes: the hot path of pull (a thousand rows per
/// request) skips building an item per row, and copies text columns from SQLite's buffers.
extension ItemJSONEncoder {
    /// `,"name":` for each user column of `schema`, made once per page.
    struct ColumnKeys {
        let keys: [[UInt8]]

        init(_ schema: TableSchema) {
            keys = schema.userColumns.map { column in
                var bytes = Array(",".utf8)
                JSONValue.writeString(column.name, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                return bytes
            }
        }
    }

    /// Appends one row selected with the schema's ``TableSchema/selectList``; directly in v2 and v3 with
    /// every column, through ``StoredItem`` otherwise.
    func append(row: Row, schema: TableSchema, keys: ColumnKeys, to bytes: inout [UInt8]) throws {
        guard style == .v2 || style == .v3, selection == nil else {
            return append(SQLiteTableStore.item(from: row, schema), to: &bytes)
        }
        bytes += Self.idKey
        try Self.appendText(row, 0, to: &bytes)
        if style == .v2 {
            bytes += Self.createdAtKey
            ProtocolDate.append(milliseconds: row[1], to: &bytes)
            bytes += Self.updatedAtKey
        } else {
            bytes += Self.firstUpdatedAtKey
        }
        ProtocolDate.append(milliseconds: row[2], to: &bytes)
        bytes += Self.versionKey
        try Self.appendText(row, 3, to: &bytes)
        bytes += (row[4] as Bool) ? Self.deletedTrue : Self.deletedFalse
        let system = TableSchema.systemColumns.count
        for (offset, key) in keys.keys.enumerated() {
            let index = system + offset
            bytes += key
            if row.hasNull(atIndex: index) {
                bytes += Self.null
                continue
            }
            switch schema.columns[index].type {
            case .string:
                try Self.appendText(row, index, to: &bytes)
            case .boolean:
                bytes += (row[index] as Int64) != 0 ? Self.trueBytes : Self.falseBytes
            case .number, .date, .unknown:
                switch (row[index] as DatabaseValue).storage {
                case .int64(let value): bytes += Array(String(value).utf8)
                case .double(let value): JSONValue.number(value).write(to: &bytes)
                case .string(let value): JSONValue.writeString(value, to: &bytes)
                case .blob(let data): JSONValue.writeString(data.base64EncodedString(), to: &bytes)
                case .null: bytes += Self.null
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A text column as a JSON string, escaped, read from SQLite's own buffer.
    private static func appendText(_ row: Row, _ index: Int, to bytes: inout [UInt8]) throws {
        try row.withUnsafeData(atIndex: index) { data in
            guard let data else { return bytes += null }
            data.withUnsafeBytes { raw in
                let buffer = raw.bindMemory(to: UInt8.self)
                if !buffer.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                    bytes.append(UInt8(ascii: "\""))
                    bytes.append(contentsOf: buffer)
                    bytes.append(UInt8(ascii: "\""))
                } else {
                    JSONValue.writeString(String(decoding: buffer, as: UTF8.self), to: &bytes)
                }
            }
        }
    }

    // The pieces of a v2 item, shared with the PostgreSQL rows' path.
    static let idKey = Array(#"{"id":"#.utf8)
    static let createdAtKey = Array(#","createdAt":""#.utf8)
    static let updatedAtKey = Array(#"","updatedAt":""#.utf8)
    /// `updatedAt` right after `id`, as v3 writes it (no `createdAt`).
    static let firstUpdatedAtKey = Array(#","updatedAt":""#.utf8)
    static let versionKey = Array(#"","version":"#.utf8)
    static let deletedTrue = Array(#","deleted":true"#.utf8)
    static let deletedFalse = Array(#","deleted":false"#.utf8)
    static let null = Array("null".utf8)
    static let trueBytes = Array("true".utf8)
    static let falseBytes = Array("false".utf8)
}
