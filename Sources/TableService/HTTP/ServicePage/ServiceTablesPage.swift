import SyncProtocol

/// The list of tables (`/service`), each with its counts of live and soft-deleted rows; the schema
/// changes applied from `--schema` files, with their dates and backfills; and the installations
/// that still write the old shape of a table; the newest stall alerts.
struct ServiceTablesPage: Encodable, Sendable {
    var tables: [Table]
    var hasTables: Bool
    var schemaChanges: [SchemaChange] = []
    var hasSchemaChanges = false
    var behind: [Installation] = []
    var hasBehind = false
    /// The newest stall alerts.
    var alerts: [Alert] = []
    var hasAlerts = false

    /// A device became stalled, or recovered.
    struct Alert: Encodable, Sendable {
        var event: String
        var device: String
        var href: String
        var table: String
        var at: String
    }

    /// One applied schema change.
    struct SchemaChange: Encodable, Sendable {
        var summary: String
        /// When it was applied (ISO 8601, UTC).
        var appliedAt: String
        /// Its backfill: "—", "in progress (N rows so far)" or "done (N rows)".
        var backfill: String
    }

    /// An installation that still sends old column names.
    struct Installation: Encodable, Sendable {
        var id: String
        var lastWrite: String
        /// `table.column`, comma-separated.
        var oldNames: String
    }

    /// One table of the list.
    struct Table: Encodable, Sendable {
        var name: String
        /// Its rows' page.
        var href: String
        var live: Int
        var deleted: Int
        /// Its user columns' names, in order.
        var columns: String
    }

    /// The list of `summaries`, linking to pages under `base`.
    init(_ summaries: [TableSummary], base: String) {
        tables = summaries.map { summary in
            Table(
                name: summary.schema.name, href: "\(base)/tables/\(summary.schema.name)", live: summary.live,
                deleted: summary.deleted, columns: summary.schema.userColumns.map(\.name).joined(separator: ", "))
        }
        hasTables = !tables.isEmpty
    }

    /// The page with `changes` and the installations still `behind`.
    init(
        _ summaries: [TableSummary], base: String, changes: [SchemaChangeRecord],
        behind: [DeviceRecord], alerts: [FleetAlerts.Alert] = []
    ) {
        self.init(summaries, base: base)
        schemaChanges = changes.map { change in
            let backfill: String =
                switch change.backfill {
                case .none: "—"
                case .pending: "in progress (\(change.stamped) rows so far)"
                case .done: "done (\(change.stamped) rows)"
                }
            return SchemaChange(
                summary: change.summary, appliedAt: ProtocolDate.format(milliseconds: change.appliedAt),
                backfill: backfill)
        }
        hasSchemaChanges = !schemaChanges.isEmpty
        self.behind = behind.map { installation in
            Installation(
                id: installation.id, lastWrite: ProtocolDate.format(milliseconds: installation.lastContact),
                oldNames: installation.oldNames.keys.sorted().joined(separator: ", "))
        }
        hasBehind = !self.behind.isEmpty
        self.alerts = alerts.map { alert in
            Alert(
                event: alert.event, device: alert.device, href: "\(base)/devices/\(NextPageLink.encode(alert.device))",
                table: alert.table, at: alert.at)
        }
        hasAlerts = !self.alerts.isEmpty
    }
}
