import HTTPTypes

/// The table protocol a doctor run speaks: Mobile Apps v2 or Datasync v3, and how each spells a request.
public enum DoctorDialect: String, Sendable, Hashable, Codable, CaseIterable {
    /// Azure Mobile Apps v2 (`ZUMO-API-VERSION: 2.0.0`): bare array or `{results, count}` pages, PATCH.
    case v2
    /// CommunityToolkit Datasync v3 (`ZUMO-API-VERSION: 3.0.0`): `{items, count, nextLink}` pages, PUT.
    case v3

    /// The `ZUMO-API-VERSION` sent.
    public var apiVersion: String {
        switch self {
        case .v2: "2.0.0"
        case .v3: "3.0.0"
        }
    }

    /// "Mobile Apps v2 (2.0.0)".
    public var label: String {
        switch self {
        case .v2: "Mobile Apps v2 (2.0.0)"
        case .v3: "Datasync v3 (3.0.0)"
        }
    }

    /// The query parameter that asks for soft-deleted rows too.
    var includeDeleted: (String, String) {
        switch self {
        case .v2: ("__includeDeleted", "true")
        case .v3: ("__includedeleted", "true")
        }
    }

    /// The query parameter that asks for the count of matching rows.
    var count: (String, String) {
        switch self {
        case .v2: ("$inlinecount", "allpages")
        case .v3: ("$count", "true")
        }
    }

    /// The method that changes an item: PATCH merges (v2), PUT replaces (v3).
    var updateMethod: HTTPRequest.Method {
        switch self {
        case .v2: .patch
        case .v3: .put
        }
    }

    /// A date-time literal for `$filter`.
    func dateLiteral(_ text: String) -> String {
        switch self {
        case .v2: "datetimeoffset'\(text)'"
        case .v3: "cast(\(text),Edm.DateTimeOffset)"
        }
    }
}

/// Which protocol to probe: the one the endpoint answers (v2 first), or one named.
public enum DoctorProtocolChoice: String, Sendable, Hashable, Codable, CaseIterable {
    /// v2 when the endpoint answers it, else v3.
    case automatic = "auto"
    /// Mobile Apps v2 only.
    case v2
    /// Datasync v3 only.
    case v3
}
