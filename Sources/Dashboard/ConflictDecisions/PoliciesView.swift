import SyncClient

/// The conflict section of the settings page: each table's policy and the journal's retention.
struct PoliciesView: Encodable, Sendable {
    var tables: [Table]
    var retention: Int

    /// One table's policy choice.
    struct Table: Encodable, Sendable {
        var name: String
        var options: [Option]
    }

    /// One policy offered.
    struct Option: Encodable, Sendable {
        var table: String
        var value: String
        var label: String
        var selected: Bool
    }

    init(context: SyncContext) {
        let policies = (try? context.conflicts.policies()) ?? [:]
        tables = context.tables.map { table in
            Table(
                name: table.name,
                options: ConflictPolicy.allCases.map { policy in
                    Option(
                        table: table.name, value: policy.rawValue, label: Self.label(policy),
                        selected: policies[table.name] == policy)
                })
        }
        retention = (try? context.retention(of: .journal)) ?? 10_000
    }

    static func label(_ policy: ConflictPolicy) -> String {
        switch policy {
        case .ask: "Ask — every conflict waits for you (the tutorial's way)"
        case .merge: "Merge — fields changed on one side merge; ask only when both changed the same field"
        case .serverWins: "Server wins — the service's version replaces yours"
        case .clientWins: "Client wins — your version is pushed over the service's"
        }
    }
}
