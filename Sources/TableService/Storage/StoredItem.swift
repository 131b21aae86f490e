import Foundation
import SyncProtocol

/// One row of a table as the service stores it: the system columns and the user fields in
/// column order.
struct StoredItem: Sendable, Equatable {
    /// One user field.
    struct Field: Sendable, Equatable {
        let name: String
        let value: JSONValue
    }

    let id: String
    /// Milliseconds since 1970, set by the service.
    let createdAt: Int64
    /// Milliseconds since 1970, set by the service; strictly increasing within a table.
    let updatedAt: Int64
    /// Opaque; changes on every write.
    let version: String
    let deleted: Bool
    let fields: [Field]

    /// The item as protocol version 2 JSON (`id`, `createdAt`, `updatedAt`, `version`, `deleted`, fields).
    var item: Item {
        var item: Item = [
            SystemColumn.id: .string(id),
            SystemColumn.createdAt: .string(ProtocolDate.format(milliseconds: createdAt)),
            SystemColumn.updatedAt: .string(ProtocolDate.format(milliseconds: updatedAt)),
            SystemColumn.version: .string(version),
            SystemColumn.deleted: .bool(deleted),
        ]
        for field in fields { item[field.name] = field.value }
        return item
    }

    /// The value of a user field, `nil` when the table has no such column.
    func value(of name: String) -> JSONValue? {
        fields.first { $0.name == name }?.value
    }

    /// The version written with a stamp: opaque to clients (base64 of the 8 bytes of the
    /// table-unique `updatedAt`, so it changes with every write).
    static func version(for stamp: Int64) -> String {
        withUnsafeBytes(of: stamp.bigEndian) { Data($0).base64EncodedString() }
    }
}
