import HTTPServer
import SyncClient
import SyncProtocol

/// The form of a row of any table: one input per column by its type, read back with
/// ``ColumnInput`` (as the CLI's `--field`). A value that does not fit refuses the whole form: it is
/// shown again as typed, the column named, and nothing is written or queued.
enum RecordForm {
    /// One column's input as the editor shows it.
    struct Field: Encodable, Sendable {
        /// The column's name (the template escapes it, like every value).
        var name: String
        /// The input's `name`: `field:` and the column's name.
        var inputName: String
        /// The input's `id`, made of the column's place (a column's name need not be a valid id).
        var inputId: String
        /// The column's type, as the store names it.
        var type: String
        var isBoolean = false
        var isNumber = false
        var isDate = false
        var isLongText = false
        var isText = false
        /// The number input's `step`: `1` for integers, `any` for reals.
        var step: String?
        /// The text shown (a date without its `Z`, as `datetime-local` shows it).
        var value: String
        var checked = false
        /// Why the value typed was refused.
        var error: String?
        /// Set when the stored value is of another type than the column's: kept exactly, flagged.
        var mismatch: String?
    }

    /// A form that was refused: what was typed, by column, and the message of each refused column.
    struct Invalid: Error, Sendable {
        var typed: [String: String]
        var errors: [String: String]

        /// One sentence naming the refused columns.
        var summary: String {
            "Nothing was saved: " + errors.keys.sorted().map { "“\($0)”: \(errors[$0] ?? "")" }.joined(separator: " ")
        }
    }

    /// The inputs that add a column the table has no field for yet: its name and its value.
    struct NewColumn: Encodable, Sendable {
        var columnName = ""
        var columnValue = ""
        /// Why the name was refused.
        var columnError: String?
        /// No column of the table is known here yet (its rows were never pulled).
        var noColumns: Bool
    }

    /// The names of the new column's inputs, and the key of its refusal in ``Invalid``.
    static let newColumnInput = "new-column", newValueInput = "new-value", newColumnKey = "another column"

    /// The name of a column's input.
    static func inputName(_ column: String) -> String { "field:" + column }

    /// The new column's inputs for `table`: empty, or as typed when refused.
    static func newColumn(_ table: TableDescription, invalid: Invalid? = nil) -> NewColumn {
        NewColumn(
            columnName: invalid?.typed[newColumnInput] ?? "", columnValue: invalid?.typed[newValueInput] ?? "",
            columnError: invalid?.errors[newColumnKey], noColumns: table.columns.isEmpty)
    }

    /// Text longer than this (or with a line break) gets a text area.
    static let longText = 80

    /// The inputs of `table`'s columns for `item` (nil: the Add form), or as typed when refused.
    static func fields(_ table: TableDescription, item: Item?, invalid: Invalid? = nil) -> [Field] {
        table.columns.enumerated().map { index, column in
            let stored = item?[column.name]
            let typed = invalid?.typed[column.name]
            let fits = stored.map { column.type.fits($0) } ?? true
            var text = typed ?? ColumnInput.text(stored, as: column.type)
            var field = Field(
                name: column.name, inputName: inputName(column.name), inputId: "field-\(index)",
                type: column.type.rawValue, value: text, error: invalid?.errors[column.name])
            if !fits {
                field.mismatch = "Kept exactly as the service sent it: not a \(column.type.rawValue) value."
                field.isText = true
                return field
            }
            switch column.type {
            case .boolean:
                field.isBoolean = true
                field.checked = typed.map { $0 == "true" } ?? (stored == .bool(true))
            case .integer, .real:
                field.isNumber = true
                field.step = column.type == .integer ? "1" : "any"
            case .date:
                field.isDate = true
                if typed == nil, text.hasSuffix("Z") { text.removeLast() }
                field.value = text
            case .json:
                field.isLongText = true
            case .text, .null:
                if text.count > longText || text.contains("\n") { field.isLongText = true } else { field.isText = true }
            }
            return field
        }
    }

    /// The columns the form changes, read by each column's type and checked by
    /// ``TablePreset/check(_:table:inserting:)``. A column whose text is what the editor showed for the
    /// stored value is left as it is (a value of another type, a null flag); an Add's unticked
    /// checkbox is false.
    static func changes(_ form: URLEncodedForm, table: TableDescription, current: Item?) -> Result<Item, Invalid> {
        var changes: Item = [:]
        var typed: [String: String] = [:]
        var errors: [String: String] = [:]
        for column in table.columns {
            let stored = current?[column.name]
            var text = form[inputName(column.name)]
            if column.type == .boolean, stored.map({ column.type.fits($0) }) ?? true {
                // A checkbox: absent is false, except for a flag that was null and stays unticked.
                if text == nil, stored == .bool(true) || current == nil { text = "false" }
            }
            guard let text else { continue }
            typed[column.name] = text
            var shown = ColumnInput.text(stored, as: column.type)
            if column.type == .date, shown.hasSuffix("Z") { shown.removeLast() }
            if current != nil, text == shown { continue }
            if current == nil, text.isEmpty { continue }
            if column.type != .text, text.trimmingCharacters(in: .whitespaces).isEmpty {
                changes[column.name] = .null
                continue
            }
            do {
                let value = try ColumnInput.value(text, column: column.name, of: table)
                // The same value written another way (a browser drops a date's zero seconds).
                if current != nil, value == (stored ?? .null) { continue }
                changes[column.name] = value
            } catch {
                errors[column.name] = error.description
            }
        }
        let newName = (form[newColumnInput] ?? "").trimmingCharacters(in: .whitespaces)
        if newName.isEmpty, let text = form[newValueInput], !text.isEmpty {
            typed[newValueInput] = text
            errors[newColumnKey] = "Name the column for the value “\(text)”, or clear the value."
        } else if !newName.isEmpty {
            let text = form[newValueInput] ?? ""
            typed[newColumnInput] = newName
            typed[newValueInput] = text
            if let problem = problem(withNewColumn: newName, of: table) {
                errors[newColumnKey] = problem
            } else {
                // A column of no type yet: the value is read as what it looks like.
                changes[newName] = (try? ColumnInput.value(text, as: nil)) ?? .string(text)
            }
        }
        errors.merge(TablePreset.check(&changes, table: table.name, inserting: current == nil)) { first, _ in first }
        guard errors.isEmpty else { return .failure(Invalid(typed: typed, errors: errors)) }
        return .success(changes)
    }

    /// Why `name` cannot be a new column of `table`, or nil.
    private static func problem(withNewColumn name: String, of table: TableDescription) -> String? {
        if table.columnType(name) != nil { return "“\(name)” is a column already: fill in its field." }
        if SystemColumn.all.contains(name) { return "“\(name)” is kept by the service: name another column." }
        guard ColumnName.isValid(name), TableDescription.canBeColumn(name) else {
            return "“\(name)” cannot be a column name: use \(ColumnName.rule)"
                + (ColumnName.isValid(name) ? ", other than SQLite's rowid, oid and _rowid_." : ".")
        }
        return nil
    }
}
