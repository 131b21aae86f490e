import Foundation
import HTTPServer
import SyncProtocol

/// Which protocol a request speaks: Mobile Apps v2 (`ZUMO-API-VERSION: 2.0.x`, header or query),
/// or, without that header, the 2015 Mobile Services protocol with `__`-prefixed system
/// properties chosen by `?__systemproperties=`.
enum ProtocolStyle: Equatable, Sendable {
    case v2
    /// The legacy style and the system columns (v2 names) to include in items.
    case legacy(systemProperties: Set<String>)

    /// The style of `request`; a `ZUMO-API-VERSION` other than 2.0.x is a 400.
    init(_ request: Request) throws(TableError) {
        let header = request.headers[ProtocolHeader.apiVersion]
        let query = request.queryItems.first { $0.name.equalsIgnoringCase(ProtocolHeader.apiVersion.rawName) }?.value
        if let version = header ?? query {
            let trimmed = version.trimmingWhitespace()
            guard trimmed == "2.0" || trimmed.hasPrefix("2.0.") else { throw .unsupportedAPIVersion }
            self = .v2
            return
        }
        var properties: Set<String> = []
        if let list = request.query("__systemproperties") {
            for raw in list.split(separator: ",") {
                let name = raw.trimmingWhitespace().lowercased()
                switch name {
                case "*", "__all", "all":
                    properties.formUnion([
                        SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version,
                        SystemColumn.deleted,
                    ])
                case "", "__none", "none":
                    break
                default:
                    guard let column = Self.legacySystemColumn(name) ?? Self.legacySystemColumn("__" + name) else {
                        throw .invalidQuery(
                            "__systemproperties names '\(raw)', which is not a system property; use __createdAt, "
                                + "__updatedAt, __version, __deleted or *.")
                    }
                    properties.insert(column)
                }
            }
        }
        self = .legacy(systemProperties: properties)
    }

    var isLegacy: Bool {
        if case .legacy = self { true } else { false }
    }

    /// The v2 system column for a legacy name (`__updatedAt` → `updatedAt`), any case.
    static func legacySystemColumn(_ name: String) -> String? {
        switch name.lowercased() {
        case "__createdat": SystemColumn.createdAt
        case "__updatedat": SystemColumn.updatedAt
        case "__version": SystemColumn.version
        case "__deleted": SystemColumn.deleted
        default: nil
        }
    }

    /// Finds the column a name in a query refers to. In the legacy style `__updatedAt` means the
    /// system column; in v2 a user column called `__version` is an ordinary column.
    func resolver(for schema: TableSchema) -> (String) -> Column? {
        let legacy = isLegacy
        return { name in
            if legacy, let system = Self.legacySystemColumn(name) { return schema.column(named: system) }
            return schema.column(named: name)
        }
    }
}

extension String {
    func equalsIgnoringCase(_ other: String) -> Bool {
        lowercased() == other.lowercased()
    }
}
