import SyncClient
import SyncProtocol

/// The `--field NAME=VALUE` options of `client add` and `client edit`, read by the columns' types
/// (``ColumnInput``); a name the table has no column for adds one, typed from its value.
struct FieldAssignments {
    /// The assignments as given, in order.
    let given: [String]

    /// The item the assignments make for `table` (nil: a table the store does not hold yet).
    ///
    /// - Throws: ``FieldAssignmentError`` naming the flag and the column; nothing is written then.
    func item(for table: TableDescription?) throws(FieldAssignmentError) -> Item {
        var item: Item = [:]
        for assignment in given {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw FieldAssignmentError(flag: assignment, reason: "give it as NAME=VALUE, such as total=12.5")
            }
            let name = String(assignment[..<equals])
            let text = String(assignment[assignment.index(after: equals)...])
            guard !SystemColumn.all.contains(name), name != TableDescription.mismatchesColumn else {
                throw FieldAssignmentError(flag: assignment, reason: "'\(name)' is set by the service, not by you")
            }
            do {
                item[name] = try ColumnInput.value(text, as: table?.columnType(name))
            } catch {
                var named = error
                named.column = name
                throw FieldAssignmentError(flag: assignment, reason: named.description)
            }
        }
        return item
    }
}

/// A `--field` that cannot be used: the flag as given and why.
struct FieldAssignmentError: Error, CustomStringConvertible {
    /// `NAME=VALUE` as given.
    var flag: String
    /// What is wrong and what fits.
    var reason: String

    var description: String {
        "--field \(flag): \(reason.hasSuffix(".") ? String(reason.dropLast()) : reason). Nothing was changed."
    }
}
