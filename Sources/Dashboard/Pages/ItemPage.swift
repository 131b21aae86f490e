/// The item editor's content (`/items/{id}`).
struct ItemPage: Encodable, Sendable {
    var item: TodoRow
    /// The form's values: the stored ones, or as typed when they were refused.
    var form: TodoForm
    /// The item's latest queued change, if any.
    var operation: PendingChange?

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
