import SyncProtocol

/// One row of a table as the service stores it: the system columns and the user fields in
/// column order.
public struct StoredItem: Sendable, Equatable {
    /// One user field.
    public struct Field: Sendable, Equatable {
        public let name: String
        public let value: JSONValue
    }

    public let id: String
    /// Milliseconds since 1970, set by the service.
    public let createdAt: Int64
    /// Milliseconds since 1970, set by the service; strictly increasing within a table.
    public let updatedAt: Int64
    /// Opaque; changes on every write.
    public let version: String
    public let deleted: Bool
    public let fields: [Field]

    /// The item as protocol version 2 JSON (`id`, `createdAt`, `updatedAt`, `version`, `deleted`, fields).
    public var item: Item {
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
    public func value(of name: String) -> JSONValue? {
        fields.first { $0.name == name }?.value
    }
}
