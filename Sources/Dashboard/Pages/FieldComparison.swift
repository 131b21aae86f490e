import SyncClient
import SyncProtocol

/// Copies of one todo compared field by field — base, client, server and, once decided, the
/// result — as the conflict page and every journal entry show them (`partials/compare`).
///
/// A field whose client and server values differ is marked on both. On narrow screens each field
/// becomes a card whose values carry their column's label.
struct FieldComparison: Encodable, Sendable {
    /// The columns after "Field", in order.
    var columns: [Column]
    var rows: [Row]

    /// One copy's column.
    struct Column: Encodable, Sendable {
        var heading: String
        /// Shown muted after the heading ("yours").
        var headingNote: String?
    }

    /// One field across the copies.
    struct Row: Encodable, Sendable {
        var name: String
        var cells: [Cell]
    }

    /// One field's value in one copy.
    struct Cell: Encodable, Sendable {
        /// `base`, `client`, `server` or `result`.
        var side: String
        /// The column's heading with its note ("Client (yours)"): the value's label in a card.
        var label: String
        var value: String
        var differs: Bool
    }

    /// Which copy a column shows.
    enum Side: String, Sendable {
        case base, client, server, result
    }

    /// One column: a copy of the item (nil when there is none) under a heading.
    struct Copy: Sendable {
        var side: Side
        var item: Item?
        var heading: String
        var note: String? = nil
    }

    /// The comparison of `copies` over the fields `names` of `table` (whose column types say how
    /// values show). A missing base (an insert has none) shows "—"; any other missing copy was deleted.
    init(fields names: [String], of table: TableDescription?, copies: [Copy]) {
        columns = copies.map { Column(heading: $0.heading, headingNote: $0.note) }
        let client = copies.first { $0.side == .client }?.item
        let server = copies.first { $0.side == .server }?.item
        rows = names.map { name in
            let differs =
                !SystemColumn.all.contains(name) && !ThreeWayMerge.same(client?[name], server?[name])
            return Row(
                name: name,
                cells: copies.map { copy in
                    Cell(
                        side: copy.side.rawValue, label: copy.note.map { "\(copy.heading) (\($0))" } ?? copy.heading,
                        value: Self.show(copy, name, table?.columnType(name)),
                        differs: differs && (copy.side == .client || copy.side == .server))
                })
        }
    }

    private static func show(_ copy: Copy, _ name: String, _ type: TableDescription.ColumnType?) -> String {
        guard let item = copy.item else { return copy.side == .base ? "—" : "(deleted)" }
        return Display.display(item[name], column: name, type: type)
    }
}
