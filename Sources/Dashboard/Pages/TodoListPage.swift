import Views

/// The todo list's content (`/`).
struct TodoListPage: Encodable, Sendable {
    /// The page's rows, rendered once each through the row cache.
    var rows: RenderedFragments<TodoRow>
    var hasItems: Bool
    /// The filter shown: all, active or completed.
    var show: String
    var search: String
    /// How many todos the filter holds (kept by the store); nil for a search.
    var total: Int?
    var filters: [FilterLink]
    var emptyMessage: String
    var pager: Pager?
    /// The add form as typed, when it was refused.
    var form: TodoForm?

    /// A link to one filter of the list.
    struct FilterLink: Encodable, Sendable {
        var label: String
        var href: String
        var current: Bool
    }

    /// Links between pages of the list.
    struct Pager: Encodable, Sendable {
        var summary: String
        var first: String?
        var previous: String?
        var next: String?
        var last: String?
    }
}

/// A todo form as typed, with the message saying what to fix.
struct TodoForm: Encodable, Sendable {
    var text: String
    var complete: Bool
    var error: String?
}
