import HTTPServer
import SyncClient
import SyncProtocol

/// How a list shows each value, by its column's type, for every table: dates as
/// `2026-11-27 10:56:12 UTC`, true/false as checkboxes, numbers right-aligned, the label as a link,
/// and each row's sync state.
struct ListView: Sendable {
    let table: TableDescription
    let preset: TablePreset
    let csrf: String

    /// A column of the list.
    struct Column: Sendable {
        var name: String
        var heading: String
        /// The store's type, shown beside a name used as heading.
        var type: String?
        var columnType: TableDescription.ColumnType
        var isNumber: Bool
    }

    /// The preset's columns that the table has, or every column.
    var columns: [Column] {
        let chosen: [(column: String, heading: String?)] =
            preset.listColumns?.map { (column: $0.column, heading: Optional($0.heading)) }
            ?? table.columns.map { (column: $0.name, heading: nil) }
        return chosen.compactMap { name, heading in
            guard let type = table.columnType(name) else { return nil }
            return Column(
                name: name, heading: heading ?? name, type: heading == nil ? type.rawValue : nil, columnType: type,
                isNumber: type == .integer || type == .real)
        }
    }

    /// Rows are headed by their id when the preset names none by a label.
    var showsId: Bool { preset.labelColumn == nil }

    /// `item` as a row of the list, with its queued operation's badge.
    func row(_ item: Item, operation: OperationSummary?) -> ListRow {
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let mismatched = Set(table.mismatchedColumns(of: item))
        let name = preset.name(item, id: id)
        let cells = columns.map { column in
            cell(item[column.name], column, mismatch: mismatched.contains(column.name), rowName: name)
        }
        return ListRow(
            id: id, shownId: Display.shortId(id), href: preset.href(id), anchor: "row-" + PercentDecoding.encode(id),
            showsId: showsId,
            done: preset.tabs.map { item[$0.column] == .bool(true) } ?? false, cells: cells,
            badge: operation.map(Display.badge), updatedAt: Display.date(item[SystemColumn.updatedAt]).nilIfEmpty,
            csrf: csrf)
    }

    private func cell(_ value: JSONValue?, _ column: Column, mismatch: Bool, rowName: String) -> ListRow.Cell {
        let text = ColumnInput.text(value, as: column.columnType)
        var cell = ListRow.Cell(text: text.count > 120 ? String(text.prefix(119)) + "…" : text)
        if mismatch {
            cell.mismatch = true
            return cell
        }
        switch column.columnType {
        case .boolean:
            let checked = value == .bool(true)
            cell.toggle = ListRow.Toggle(
                column: column.name, checked: checked, next: checked ? "false" : "true",
                label: "\(column.heading): \(rowName)", marksDone: column.name == preset.tabs?.column)
        case .date:
            cell.text = Display.date(value)
            cell.isDate = true
        case .integer, .real:
            cell.isNumber = true
        case .text, .json, .null:
            cell.isLink = column.name == preset.labelColumn
        }
        return cell
    }
}

extension String {
    /// nil for the empty string.
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
