import Foundation
import HTTPTypes

/// The table protocol a service speaks.
public enum TableProtocol: String, Sendable, Hashable, Codable, CaseIterable {
    /// Azure Mobile Apps v2 (`ZUMO-API-VERSION: 2.0.0`): array pages, PATCH, `$inlinecount`.
    case v2
    /// CommunityToolkit Datasync v3 (`3.0.0`): `{items, count, nextLink}` pages, PUT, `$count`,
    /// 410 for a deleted item.
    case v3

    /// "Mobile Apps v2 (2.0.0)", "Datasync v3 (3.0.0)".
    public var label: String {
        switch self {
        case .v2: "Mobile Apps v2 (2.0.0)"
        case .v3: "Datasync v3 (3.0.0)"
        }
    }

    /// The method that changes an item: PATCH merges the columns sent (v2), PUT replaces the item (v3).
    var updateMethod: HTTPRequest.Method {
        switch self {
        case .v2: .patch
        case .v3: .put
        }
    }

    /// The `ZUMO-API-VERSION` it is asked for with.
    var apiVersion: String {
        switch self {
        case .v2: "2.0.0"
        case .v3: "3.0.0"
        }
    }

    /// The query parameter that includes deleted rows in a page.
    var includeDeletedParameter: String {
        switch self {
        case .v2: "__includeDeleted"
        case .v3: "__includedeleted"
        }
    }

    /// The query parameter and value that ask for the total with a page.
    var countParameter: (String, String) {
        switch self {
        case .v2: ("$inlinecount", "allpages")
        case .v3: ("$count", "true")
        }
    }

    /// An `updatedAt` instant as an OData literal: `datetimeoffset'…'` in v2, bare in v3 (OData 4).
    func instant(_ text: String) -> String {
        switch self {
        case .v2: "datetimeoffset'\(text)'"
        case .v3: text
        }
    }
}

/// Which table protocol a ``SyncContext`` speaks: one of them, or `auto`, which asks the service
/// once (see ``TableProtocol``) and keeps the answer in the store, bound to its remote.
public enum ProtocolChoice: String, Sendable, Hashable, Codable, CaseIterable {
    case auto, v2, v3

    /// The protocol chosen, nil for `auto`.
    public var fixed: TableProtocol? { TableProtocol(rawValue: rawValue) }
}
