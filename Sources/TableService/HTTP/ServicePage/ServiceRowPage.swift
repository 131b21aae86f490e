import SyncProtocol

/// One row's page (`/service/tables/{table}/{id}`): its system values and a form with a field per
/// user column, or the undelete button when it is soft-deleted; after a stale write, what was sent.
struct ServiceRowPage: Encodable, Sendable {
    var table: String
    var tableHref: String
    /// Where the row's forms post.
    var rowHref: String
    var item: Item
    var fields: [Field]
    /// Set when a write was refused because the row changed since the form was shown.
    var conflict: Conflict?

    /// The row's system values.
    struct Item: Encodable, Sendable {
        var id: String
        var version: String
        var deleted: Bool
        var createdAt: String
        var updatedAt: String
    }

    /// One user column's form field.
    struct Field: Encodable, Sendable {
        var name: String
        /// The column's type, in words.
        var type: String
        /// A boolean column gets a null/true/false menu instead of a text field.
        var isBoolean: Bool
        /// The value as text ("" for null).
        var value: String
        var isNull: Bool
        var isTrue: Bool
        var isFalse: Bool
    }

    /// A refused write: the version the form had, the row's version now, and what the form sent.
    struct Conflict: Encodable, Sendable {
        var yourVersion: String
        var currentVersion: String
        var sent: [SentValue]
    }

    /// A value a refused form sent, as typed ("(empty)" for nothing).
    struct SentValue: Encodable, Sendable {
        var name: String
        var value: String
    }

    /// The page of `item` of `schema`, whose table page is `tableHref` and whose forms post to `rowHref`.
    init(_ schema: TableSchema, item: StoredItem, tableHref: String, rowHref: String, conflict: Conflict?) {
        table = schema.name
        self.tableHref = tableHref
        self.rowHref = rowHref
        self.item = Item(
            id: item.id, version: item.version, deleted: item.deleted,
            createdAt: ProtocolDate.format(milliseconds: item.createdAt),
            updatedAt: ProtocolDate.format(milliseconds: item.updatedAt))
        fields = item.fields.map { field in
            let column = schema.column(named: field.name) ?? Column(name: field.name, type: .unknown, isSystem: false)
            return Field(
                name: column.name, type: column.type.rawValue, isBoolean: column.type == .boolean,
                value: field.value.isNull ? "" : field.value.description, isNull: field.value.isNull,
                isTrue: field.value == .bool(true), isFalse: field.value == .bool(false))
        }
        self.conflict = conflict
    }
}
