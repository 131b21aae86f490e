import Foundation
import SyncProtocol

/// One conflicted operation with everything a conflict page shows: base, client and server values.
public struct SyncConflict: Sendable, Hashable, Codable, Identifiable {
    /// The conflicted operation (its `base` is the last server copy it started from).
    public var operation: TableOperation
    /// The conflict as recorded: status, message, server and sent items.
    public var error: OperationError
    /// The local row now (nil for a delete, or an item deleted locally).
    public var clientItem: Item?

    /// The operation id (what Use Client / Use Server / Cancel take).
    public var id: Int64 { operation.id }
    /// The last server copy the local change started from.
    public var base: Item? { operation.base }
    /// The server's current copy; nil when the server deleted the item.
    public var serverItem: Item? { error.serverItem }
    /// Whether the server no longer has the item (deleted there, or gone with a restore).
    public var deletedOnServer: Bool { error.kind == .deletedOnServer || error.kind == .goneFromService }
    /// Whether the item is gone because the service went back in time (a restore from a backup).
    public var goneFromService: Bool { error.kind == .goneFromService }
    /// Whether the service went back in time to older values of the item (a restore from a backup).
    public var restoredOlder: Bool { error.kind == .restoredOlder }

    /// One row of the field-by-field table.
    public struct Field: Sendable, Hashable, Codable {
        /// The column.
        public var name: String
        /// The value in the last server copy the change started from.
        public var base: JSONValue?
        /// The local value.
        public var client: JSONValue?
        /// The server's value.
        public var server: JSONValue?
        /// Client and server hold different values.
        public var differs: Bool { client != server }
    }

    /// User columns first (in the table's order), then `version` and `updatedAt`.
    public func fields(columns: [String]) -> [Field] {
        var names = columns
        for item in [clientItem, serverItem, base] {
            for key in (item ?? [:]).keys.sorted() where !names.contains(key) && !SystemColumn.all.contains(key) {
                names.append(key)
            }
        }
        names += [SystemColumn.version, SystemColumn.updatedAt]
        return names.map { name in
            Field(name: name, base: base?[name], client: clientItem?[name], server: serverItem?[name])
        }
    }
}
