/// The list of tables (`/service`), each with its counts of live and soft-deleted rows.
struct ServiceTablesPage: Encodable, Sendable {
    var tables: [Table]
    var hasTables: Bool

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
}
