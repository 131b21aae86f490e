import Foundation
import SyncProtocol

/// What a queued operation does on the server.
public enum OperationKind: String, Sendable, Codable, CaseIterable {
    /// `POST /tables/{table}`.
    case insert
    /// `PATCH /tables/{table}/{id}` with `If-Match`.
    case update
    /// `DELETE /tables/{table}/{id}` with `If-Match`.
    case delete
}

/// Where a queued operation stands.
public enum OperationState: String, Sendable, Codable, CaseIterable {
    /// Waiting for the next push.
    case pending
    /// Being sent right now.
    case inFlight
    /// Sent at least once without a known outcome (the connection failed); retried by the next push.
    case attempted
    /// The server refused it (400 or another 4xx); see its error. Edit the item, or discard the operation.
    case failed
    /// The server holds another version; resolve it with Use Client, Use Server or Cancel.
    case conflict
}

extension OperationState {
    /// The states a push sends: pending and attempted.
    static let sendable: [OperationState] = [.pending, .attempted]

    /// ``sendable`` as an SQL list: `'pending', 'attempted'`.
    static let sendableSQL = sendable.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// Whether a push sends an operation in this state.
    var isSendable: Bool { Self.sendable.contains(self) }

    /// Whether the operation still waits to reach the service (counted as pending in the status).
    var isWaiting: Bool {
        switch self {
        case .pending, .inFlight, .attempted: true
        case .failed, .conflict: false
        }
    }
}

/// One queued local change, as the queue page lists it (push order is `id` order).
public struct TableOperation: Sendable, Hashable, Codable, Identifiable {
    /// The operation's id, which is also its place in the push order.
    public var id: Int64
    /// The table of the item.
    public var table: String
    /// The item's id.
    public var itemId: String
    /// Insert, update or delete.
    public var kind: OperationKind
    /// Pending, in flight, attempted, failed or conflict.
    public var state: OperationState
    /// The row as it was when deleted (deletes): its values and the version sent as `If-Match`. For
    /// inserts and updates, the body last sent, so that a retry recognises an attempt whose answer was lost.
    public var item: Item?
    /// The last server copy the change started from (for three-way views); nil for new items.
    public var base: Item?
    /// How many times it has been sent.
    public var attempts: Int
    /// When the change was first queued.
    public var queuedAt: Date
    /// When it was last sent.
    public var lastAttemptAt: Date?
    /// The HTTP status of the last attempt, if an answer came.
    public var lastStatus: Int?
    /// The last error message (server's message, conflict, network failure).
    public var message: String?
    /// Set when Use Client re-creates an item the server deleted.
    var recreate: Bool = false
    /// Set while a person holds the operation back: a push skips it (and the item's later
    /// operations) until it is released. Its state is kept underneath.
    public var hold: OperationHold? = nil
    /// The user columns the queued change sets (every local edit that joined it adds its own), which
    /// an update sends; nil for an insert, and for an operation of an older todosync (then an update
    /// sends the columns that differ from ``base``).
    var changedColumns: Set<String>? = nil

    /// Whether a person holds the operation back from pushes.
    public var isHeld: Bool { hold != nil }
}

/// A person's hold on a queued operation: kept, never pushed, until released.
public struct OperationHold: Sendable, Hashable, Codable {
    /// When it was held.
    public var since: Date
    /// Why, in the person's words (nil: no reason given).
    public var reason: String?

    /// A hold from `since`, with an optional reason.
    public init(since: Date, reason: String? = nil) {
        self.since = since
        self.reason = reason
    }
}

/// An operation's place, kind and state without its items: cheap to read for a page of rows.
public struct OperationSummary: Sendable, Hashable {
    /// The operation's id (its place in the push order).
    public var id: Int64
    /// The item's id.
    public var itemId: String
    /// Insert, update or delete.
    public var kind: OperationKind
    /// Pending, in flight, attempted, failed or conflict.
    public var state: OperationState
    /// Whether a person holds it back from pushes.
    public var isHeld: Bool = false
}

/// What kind of trouble an operation met.
public enum OperationErrorKind: String, Sendable, Codable {
    /// The server has another version of the item (412 or 409).
    case conflict
    /// The item is gone from the server (update answered 404, or a duplicate id of a deleted item).
    case deletedOnServer
    /// The server refused the change (400 or another 4xx).
    case failed
    /// The service went back in time (restored from a backup) to before the item was written: it
    /// no longer has the item this store had synced. Decided like ``deletedOnServer``: Use Client
    /// adds it again with the local values, Use Server drops it here.
    case goneFromService = "gone-from-service"
    /// The service went back in time to older values of the item than this store had synced. Decided
    /// like ``conflict``: Use Client pushes the local values over the restored ones, Use Server takes them.
    case restoredOlder = "restored-older"
}

/// The last error of one operation (the `__errors` row).
public struct OperationError: Sendable, Hashable, Codable {
    /// The operation it belongs to.
    public var operationId: Int64
    /// Conflict, deleted on the server, or refused.
    public var kind: OperationErrorKind
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's message or ours.
    public var message: String
    /// The server's copy of the item (conflicts), nil when the server deleted it.
    public var serverItem: Item?
    /// What we sent.
    public var clientItem: Item?
    /// When it happened.
    public var recordedAt: Date
}
