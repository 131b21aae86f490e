/// The queue's content (`/operations`): queued changes in push order.
struct OperationsPage: Encodable, Sendable {
    var operations: [OperationRow]
    var hasOperations: Bool
    /// Whether anything is queued at all (on any page).
    var canPush: Bool
    var pager: TodoListPage.Pager?
    var emptyMessage: String

    /// One queued change.
    struct OperationRow: Encodable, Sendable {
        var id: Int64
        var sequence: Int64
        var table: String
        var kind: String
        var state: String
        /// The state badge's CSS kind.
        var stateBadge: String
        var attempts: Int
        /// The item's text, else its id.
        var label: String
        var itemHref: String?
        var conflictHref: String?
        /// Why the item is as it is: its history.
        var historyHref: String
        /// The HTTP status of the last answer, if one came.
        var lastStatus: Int?
        /// The service's last message, readable and folded when long.
        var answer: ReadableAnswer
        var queuedAt: String
        /// Whether the service refused it, so it waits for Retry or Discard.
        var canRetry: Bool
    }
}

/// The confirmation page before discarding a queued change.
struct DiscardPage: Encodable, Sendable {
    var operation: Target

    /// The change that would be discarded.
    struct Target: Encodable, Sendable {
        var id: Int64
        var kind: String
        var label: String
        /// Whether the item was synced before (discarding returns it to that value).
        var hasBase: Bool
    }
}
