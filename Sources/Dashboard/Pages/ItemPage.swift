/// The item editor's content (`/items/{id}`).
struct ItemPage: Encodable, Sendable {
    var item: TodoRow
    /// The form's values: the stored ones, or as typed when they were refused.
    var form: TodoForm
    /// The item's latest queued change, if any.
    var operation: PendingChange?
    /// todoitem's columns beyond text and complete (`priority`, `due`...), with their values.
    var otherColumns: [OtherColumn] = [] { didSet { hasOtherColumns = !otherColumns.isEmpty } }
    var hasOtherColumns = false
    /// The editor of every column of this todo (`/data/todoitem/{id}`).
    var dataHref = ""

    /// A column the todo editor does not edit itself.
    struct OtherColumn: Encodable, Sendable {
        var name: String
        var type: String
        var value: String
        /// Of another type than the column's: kept exactly as it came.
        var mismatch: Bool
    }

    /// A queued change as the editor describes it.
    struct PendingChange: Encodable, Sendable {
        var kind: String
        var state: String
        /// The badge's CSS kind.
        var badge: String
        var conflictHref: String?
        var message: String?
    }
}

/// The confirmation page before deleting a todo.
struct DeletePage: Encodable, Sendable {
    var item: TodoRow
}
