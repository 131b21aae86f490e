/// How a protocol reads, orders and pages list queries: the one place where Mobile Apps (v2 and
/// the 2015 style) and Datasync v3 differ in `GET /tables/{table}`.
struct QueryRules: Sendable, Equatable {
    /// How the total count is asked for.
    enum CountOption: Sendable, Equatable {
        /// `$inlinecount=allpages` (or `none`).
        case inlineCount
        /// `$count=true` (or `false`).
        case count
    }

    /// Where rows come from when the query has no `$orderby`.
    enum DefaultOrder: Sendable, Equatable {
        /// The order they were first inserted.
        case insertion
        /// By `id`.
        case id
    }

    var countOption: CountOption
    /// Whether `__includeDeleted` must be `true` or `false` in any letter case (v2 and v3, whose
    /// document declares it a boolean: anything else is a 400), or is "true" to include deleted
    /// rows and ignored otherwise.
    var strictIncludeDeleted: Bool
    var defaultOrder: DefaultOrder
    /// Whether the `id` added after `$orderby` takes the last key's direction (v2) or is always
    /// ascending (v3).
    var tieBreakFollowsLastKey: Bool
    /// The largest `$top` when the protocol fixes it (v3: 128,000); `nil` uses the service's.
    var maximumTop: Int?
    /// Whether a page holds at most the page size even when `$top` asks for more (v3, whose
    /// `nextLink` fetches the rest); in v2 `$top` is the page size.
    var pageSizeCapsTop: Bool
    /// Whether a page reads one row past its end, to learn whether another page follows (v3's
    /// `nextLink` is null at the end; counting every query would cost more).
    var probesNextRow: Bool

    /// Mobile Apps v2 and the 2015 style.
    static let mobileApps = QueryRules(
        countOption: .inlineCount, strictIncludeDeleted: true, defaultOrder: .insertion, tieBreakFollowsLastKey: true,
        maximumTop: nil, pageSizeCapsTop: false, probesNextRow: false)

    /// Datasync v3, as the CommunityToolkit server answers.
    static let datasync = QueryRules(
        countOption: .count, strictIncludeDeleted: true, defaultOrder: .id, tieBreakFollowsLastKey: false,
        maximumTop: 128_000, pageSizeCapsTop: true, probesNextRow: true)
}

extension ProtocolStyle {
    /// The list-query rules of this protocol.
    var queryRules: QueryRules {
        switch self {
        case .v2, .legacy: .mobileApps
        case .v3: .datasync
        }
    }
}
