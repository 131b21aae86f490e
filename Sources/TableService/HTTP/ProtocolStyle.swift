import Foundation
import HTTPServer
import SyncProtocol

/// Which protocol a request speaks, decided once per request: Mobile Apps v2
/// (`ZUMO-API-VERSION: 2.0.x`, header or query), CommunityToolkit Datasync v3 (`3.0.x`), or,
/// without that header, the 2015 Mobile Services protocol with `__`-prefixed system properties
/// chosen by `?__systemproperties=`.
///
/// What differs between them is answered here and in the types it hands out: how list queries
/// are read and ordered (``QueryRules``), how pages are wrapped (``PageEnvelope``), how items are
/// written (``ItemJSONEncoder``) and read (``ItemChanges``); v3's item routes are
/// ``DatasyncItemEndpoints``.
enum ProtocolStyle: Equatable, Sendable {
    case v2
    /// Datasync v3: `{items, count, nextLink}` pages, PUT, 201/204, 410, no `createdAt`.
    case v3
    /// The legacy style and the system columns (v2 names) to include in items.
    case legacy(systemProperties: Set<String>)

    /// The style of `request`; a `ZUMO-API-VERSION` other than 2.0.x is a 400.
    init(_ request: Request) throws(TableError) {
        let header = request.headers.value(ProtocolHeader.apiVersion)
        let query = request.queryItems.first { $0.name.caseInsensitiveEquals(ProtocolHeader.apiVersion.rawName) }?.value
        if let version = header ?? query {
            let trimmed = version.trimmingWhitespace()
            if trimmed == "3.0" || trimmed.hasPrefix("3.0.") {
                self = .v3
                return
            }
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

    /// Whether `request` names protocol v3 in `ZUMO-API-VERSION` (checked before the routes that
    /// only v3 has, which answer other protocols as before).
    static func isV3(_ request: Request) -> Bool {
        (try? ProtocolStyle(request)) == .v3
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
    /// Columns declared in a schema file carry their declared type, and answer to a former name.
    func resolver(for schema: TableSchema, declaration: TableDeclaration? = nil) -> (String) -> Column? {
        let legacy = isLegacy
        return { name in
            if legacy, let system = Self.legacySystemColumn(name) { return schema.column(named: system) }
            // An old app's query may name a renamed column by its former name.
            let renamed = declaration?.columns.first { $0.renamedFrom?.lowercased() == name.lowercased() }
            guard var column = schema.column(named: name) ?? renamed.flatMap({ schema.column(named: $0.name) })
            else { return nil }
            if !column.isSystem, let declared = declaration?.column(named: column.name) {
                column.declared = declared.type
            }
            return column
        }
    }
}
