/// The queue's content (`/operations`): queued changes in push order.
struct OperationsPage: Encodable, Sendable {
    var operations: [OperationRow]
    var hasOperations: Bool
    /// Whether anything is queued at all (on any page).
    var canPush: Bool
    var pager: Pager?
    var emptyMessage: String
    /// How many changes of this page are stuck (shown first), and how many are held in all.
    var stuckCount: Int
    var heldCount: Int
    /// How long a change waits before it counts as stuck ("1 hour").
    var stuckAge: String

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
        /// The item's text, else its id (a UUID shortened).
        var label: String
        var itemId: String
        var itemHref: String?
        var conflictHref: String?
        /// Why the item is as it is: its history.
        var historyHref: String
        /// The HTTP status of the last answer, if one came.
        var lastStatus: Int?
        /// The service's last message, readable and folded when long.
        var answer: ReadableAnswer
        var queuedAt: String
        /// How long it has been queued: "just now", "12 min", "3 h".
        var age: String
        /// Why it is stuck ("refused", "failing", "waiting over 1 h"); nil when it is not.
        var stuck: String?
        /// When it was held and why (nil when it is not held).
        var heldSince: String?
        var heldReason: String?
        /// When it is sent next, in words ("on the next push", "held: …", "after #4 …").
        var nextAttempt: String
        /// When auto-sync pushes next (filled by auto-sync; nil: pushes run when asked).
        var nextAttemptAt: String?
        /// The buttons its row offers.
        var canRetry: Bool
        var canHold: Bool
        var canRelease: Bool
        var canDiscard: Bool
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

/// The confirmation page before discarding several queued changes (the bulk form's Discard).
struct BulkDiscardPage: Encodable, Sendable {
    var operations: [DiscardPage.Target]
    /// Whether any selected change is still queued.
    var hasOperations: Bool
}
