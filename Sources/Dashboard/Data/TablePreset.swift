import HTTPServer
import SyncClient
import SyncProtocol

/// How the Data pages show one table: its addresses, its words, and which columns the list shows.
///
/// Every table has the ``plain(_:)`` preset under `/data/{table}`. The todo list is `todoitem`'s
/// preset ``todos``: the same list and record view at `/` and `/items/{id}`, showing the checkbox
/// and the text, with Active/Completed tabs and a one-line Add.
struct TablePreset: Sendable {
    var table: String
    /// The list's address; a row's page is `{recordPath}/{id}`.
    var listPath: String
    var recordPath: String
    /// The list's heading ("Todos", or the table's name).
    var title: String
    /// What one row is called ("todo", "row").
    var noun: String
    var section: Navigation.Section
    /// The column that names a row: its link in the list and the one field of a one-line Add,
    /// which stays on the list. nil: rows are named by their id, and Add is the full form.
    var labelColumn: String?
    /// The columns the list shows, with their headings (nil: every column, headed by its name).
    var listColumns: [(column: String, heading: String)]?
    /// Named filters of a true/false column, shown as tabs (`?show=active`).
    var tabs: Tabs?

    /// Tabs that filter the list by one true/false column; the first shows every row.
    struct Tabs: Sendable {
        var column: String
        var named: [(name: String, label: String, value: Bool?)]

        /// The tab named `name`, if any.
        func value(named name: String) -> Bool?? { named.first { $0.name == name }.map(\.value) }
    }

    /// The longest text the label column takes.
    static let labelLength = 1000

    /// `/data/{table}`: every column, filters on each true/false column, the full Add form.
    static func plain(_ table: String) -> TablePreset {
        let path = "/data/" + PercentDecoding.encode(table)
        return TablePreset(table: table, listPath: path, recordPath: path, title: table, noun: "row", section: .data)
    }

    /// The todo list: `todoitem` at `/` and `/items/{id}`.
    static let todos = TablePreset(
        table: DashboardEnvironment.table, listPath: "/", recordPath: "/items", title: "Todos", noun: "todo",
        section: .todos, labelColumn: "text", listColumns: [("complete", "Done"), ("text", "Todo")],
        tabs: Tabs(
            column: "complete",
            named: [("all", "All", nil), ("active", "Active", false), ("completed", "Completed", true)]))

    /// A row's page.
    func href(_ id: String) -> String { recordPath + "/" + PercentDecoding.encode(id) }

    /// The preset the pages show `table` with: the todo list's for `todoitem`, else the plain one.
    static func of(_ table: String) -> TablePreset {
        table == todos.table ? todos : plain(table)
    }

    /// The page of row `id` of `table`: a todo's at `/items/{id}`, any other row's under `/data`.
    static func href(_ table: String, _ id: String) -> String { of(table).href(id) }

    /// A row's label (a todo's text, at most 80 characters); nil when the table has no label
    /// column or the row leaves it empty.
    func label(_ item: Item?) -> String? {
        guard let labelColumn, let text = item?[labelColumn]?.stringValue, !text.isEmpty else { return nil }
        return String(text.prefix(80))
    }

    /// How the pages name a row: its label in quotes, else its id.
    func name(_ item: Item?, id: String) -> String {
        label(item).map { "“\($0)”" } ?? id
    }

    /// Checks a change of `table` wherever it comes from (its pages, `/data`, `/api/data`): the todos'
    /// text is required, trimmed, and at most ``labelLength`` characters. Returns the message of each
    /// refused column.
    static func check(_ changes: inout Item, table: String, inserting: Bool) -> [String: String] {
        guard table == todos.table, let labelColumn = todos.labelColumn else { return [:] }
        guard let value = changes[labelColumn] else {
            return inserting ? [labelColumn: "Write what needs doing: the \(labelColumn) cannot be empty."] : [:]
        }
        guard case .string(let raw) = value else { return [labelColumn: "The \(labelColumn) must be text."] }
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return [labelColumn: "Write what needs doing: the \(labelColumn) cannot be empty."] }
        if text.count > Self.labelLength {
            return [
                labelColumn:
                    "Keep the \(labelColumn) to \(Self.labelLength) characters or fewer; this one has \(text.count)."
            ]
        }
        changes[labelColumn] = .string(text)
        return [:]
    }
}
