import Foundation
import SyncProtocol

/// A request body checked against the protocol's rules: the id, the version the client last saw,
/// and the user fields to store.
struct ItemChanges: Sendable {
    var id: String?
    /// The `version` (or legacy `__version`) sent in the body, compared like `If-Match` but
    /// answered with 409 (412 in the legacy protocol) when stale.
    var version: String?
    /// Fields in the order the body listed them (new columns are created in that order).
    var fields: [StoredItem.Field]
}

extension ItemChanges {
    /// Longest id accepted.
    static let maximumIDLength = 255

    /// The lower-cased names of the properties the service sets itself: refused in a body.
    /// (Built once: a literal array in the loop was allocated for every property of every write.)
    private static let stampProperties: Set<String> = ["createdat", "updatedat", "deleted"]
    /// The lower-cased system properties of a whole v3 entity, which the service ignores in a body.
    private static let entityProperties: Set<String> = ["updatedat", "createdat", "deleted", "version"]

    /// Reads and checks a JSON object body: property names must be column names, values plain
    /// (no objects or arrays), and server-owned properties are refused with the official message.
    init(body: Data, style: ProtocolStyle) throws(TableError) {
        let members: OrderedJSONParser.Members
        do {
            members = try OrderedJSONParser.object(Array(body))
        } catch {
            throw .invalidRequest(
                "The request body must be a JSON object such as {\"text\": \"milk\"}; this one is not (\(error.message))."
            )
        }
        try self.init(members: members, style: style)
    }

    init(object: [String: JSONValue], style: ProtocolStyle) throws(TableError) {
        try self.init(members: object.keys.sorted().map { ($0, object[$0]!) }, style: style)
    }

    /// Checks the members of a body object, in the order they were sent.
    init(members: OrderedJSONParser.Members, style: ProtocolStyle) throws(TableError) {
        id = nil
        version = nil
        fields = []
        for (name, value) in members {
            let lowered = name.lowercased()
            if lowered == SystemColumn.id {
                switch value {
                case .null: break
                case .string(let text): id = try Self.checkedID(text)
                default: throw .invalidRequest("The id must be a string (or left out to let the service make one).")
                }
                continue
            }
            // v3 clients send whole entities; the service sets these itself, and the version to
            // check comes from If-Match only.
            if style == .v3, Self.entityProperties.contains(lowered) { continue }
            if lowered == "version" || (style.isLegacy && lowered == "__version") {
                switch value {
                case .null: break
                case .string(let text): version = text
                default: throw .invalidRequest("The \(name) property must be the string the service sent.")
                }
                continue
            }
            if Self.stampProperties.contains(lowered)
                || (style.isLegacy && ProtocolStyle.legacySystemColumn(lowered) != nil)
            {
                throw .invalidRequest(ProtocolMessage.reservedProperty(name))
            }
            if lowered == RowScope.ownerColumn {
                throw .invalidRequest(
                    "The property '\(name)' is kept by the service (each row's owner); leave it out of the body.")
            }
            // The hidden columns of schema changes: a backfill's marker, a retired column's values.
            if lowered == BackfillMarker.column || lowered.hasPrefix(SchemaChangePlanner.retiredPrefix) {
                throw .invalidRequest(
                    "The property '\(name)' is kept by the service (schema changes); leave it out of the body.")
            }
            try Self.checkColumnName(name)
            switch value {
            case .array, .object:
                throw .invalidRequest(
                    "The property '\(name)' holds a JSON \(value.isArray ? "array" : "object"); a table stores only "
                        + "strings, numbers, booleans and null. Send it as a string if you need to keep it.")
            default:
                fields.append(StoredItem.Field(name: name, value: value))
            }
        }
        var seen = Set<String>(minimumCapacity: fields.count)
        for field in fields where !seen.insert(field.name.lowercased()).inserted {
            throw .invalidRequest(
                "The body has two properties named '\(field.name)' apart from letter case; column names ignore case, keep one."
            )
        }
    }

    /// An id as given, if it is a usable one.
    static func checkedID(_ id: String) throws(TableError) -> String {
        guard !id.isEmpty, id.utf8.count <= maximumIDLength,
            !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw .invalidRequest(
                "An id must be 1 to \(maximumIDLength) bytes of text without control characters; leave it out to get a UUID."
            )
        }
        return id
    }

    /// Property names become SQLite columns (see ``ColumnName``).
    static func checkColumnName(_ name: String) throws(TableError) {
        guard ColumnName.isValid(name) else {
            throw .invalidRequest("The property name '\(name)' cannot be a column: use \(ColumnName.rule).")
        }
    }
}

extension JSONValue {
    var isArray: Bool {
        if case .array = self { true } else { false }
    }
}
