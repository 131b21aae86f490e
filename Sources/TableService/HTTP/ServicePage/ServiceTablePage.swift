import SyncProtocol

/// One table's rows (`/service/tables/{table}`), newest changes first, soft-deleted ones included.
struct ServiceTablePage: Encodable, Sendable {
    var table: String
    /// The column headings: the system columns shown, then the user columns.
    var columns: [String]
    var rows: [Row]
    var hasRows: Bool
    /// How many rows are shown, in words.
    var summary: String

    /// One row: its cells in the order of ``columns``, and its edit page.
    struct Row: Encodable, Sendable {
        var cells: [Cell]
        var deleted: Bool
        var href: String
    }

    /// One value of a row, as text.
    struct Cell: Encodable, Sendable {
        var text: String
        /// A system value (id, stamp, version), shown in a monospace font.
        var mono: Bool = false
        /// A null user value, shown as a greyed "null".
        var isNull: Bool = false
    }

    /// The page of `items` of `schema`, at most `limit` (the newest), each linking to `href(id)`.
    init(_ schema: TableSchema, items: [StoredItem], limit: Int, href: (String) -> String) {
        table = schema.name
        columns = ["id", "updatedAt", "version", "deleted"] + schema.userColumns.map(\.name)
        rows = items.map { item in
            var cells = [
                Cell(text: item.id, mono: true),
                Cell(text: ProtocolDate.format(milliseconds: item.updatedAt), mono: true),
                Cell(text: item.version, mono: true), Cell(text: item.deleted ? "true" : "false"),
            ]
            for field in item.fields {
                cells.append(
                    Cell(text: field.value.isNull ? "null" : field.value.description, isNull: field.value.isNull))
            }
            return Row(cells: cells, deleted: item.deleted, href: href(item.id))
        }
        hasRows = !rows.isEmpty
        summary = items.count == limit ? "The \(limit) most recently changed rows." : "\(items.count) rows."
    }
}
