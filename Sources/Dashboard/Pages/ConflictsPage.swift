/// The conflict list's content (`/conflicts`).
struct ConflictsPage: Encodable, Sendable {
    var conflicts: [Summary]
    var hasConflicts: Bool
    /// How many are listed (all, or those matching the filter).
    var count: Int
    /// The text filter, when one is set.
    var q: String?

    /// One conflict in the list.
    struct Summary: Encodable, Sendable {
        var id: Int64
        var itemId: String
        /// The item's table.
        var table: String
        var kind: String
        /// The item's label (a todo's text), else its id as lists show it.
        var title: String
        /// The client's value in words, or "(deleted here)".
        var client: String
        /// The server's value in words, or "(deleted on the server)".
        var server: String
        var when: String
    }
}

/// The conflict page's content (`/conflicts/{operation}`): base, client and server field by field.
struct ConflictPage: Encodable, Sendable {
    var id: Int64
    /// The item's whole id.
    var itemId: String
    /// The item's label (a todo's text), else its id as lists show it.
    var title: String
    /// What happened, in words.
    var explanation: String
    /// The item's history: how both sides got here.
    var historyHref: String
    /// Base, client and server field by field.
    var comparison: FieldComparison
    /// Both copies exist: Use Client / Use Server / Cancel and the per-field pick are offered.
    var editAgainstEdit: Bool
    /// The per-field pick, or the plainly worded buttons of a delete against an edit.
    var decide: ConflictDecisionView
}
