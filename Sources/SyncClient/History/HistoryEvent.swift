import Foundation
import SyncProtocol

/// One thing that happened to a row, as its history lists it.
public struct HistoryEvent: Sendable, Hashable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A local insert, edit or delete (``HistoryEvent/values`` holds what changed).
        case localInsert = "local-insert"
        case localUpdate = "local-update"
        case localDelete = "local-delete"
        /// The service applied a queued change.
        case pushed
        /// A change was sent and no answer came: the next push finds out whether it was applied.
        case pushUnanswered = "push-unanswered"
        /// The service refused a change (400 or another 4xx).
        case pushRefused = "push-refused"
        /// The service held another version (or none): the change waits for a decision.
        case conflict
        /// A conflict was decided (``HistoryEvent/journalEntry`` says how).
        case decided
        /// A person set a conflict or a refusal aside: the change is pending again.
        case cancelled
        /// A person dropped the change: the row went back to the last server copy.
        case discarded
        /// A person held the change back: no push sends it until it is released.
        case held
        /// A person released a held change: the next push sends it.
        case released
        /// A pull page wrote the service's copy into the row.
        case pulled
        /// A pull page removed the row: the service deleted it.
        case pulledDelete = "pulled-delete"
        /// A pull page brought a copy and left the row alone: a local change was queued.
        case pullSkipped = "pull-skipped"
        /// Rows of the table were removed from this device (`purge`).
        case purged
        /// The table's delta tokens were forgotten: the next pull reads every row again.
        case tokenReset = "token-reset"
        /// The store was bound to another service.
        case remoteSwitched = "remote-switched"
        /// The service went back in time (a restore): the table was read again and reconciled.
        case serviceRestored = "service-restored"
        /// The service's admin revoked this store's access: its unsynced changes went to escrow, and
        /// the table was wiped or kept read-only.
        case accessRevoked = "access-revoked"

        /// Whether the event concerns the whole table rather than this row.
        public var isTableWide: Bool {
            switch self {
            case .purged, .tokenReset, .remoteSwitched, .serviceRestored, .accessRevoked: true
            default: false
            }
        }
    }

    /// A pull page, as it is kept: which pull, and where its token stood before and after.
    public struct PullPage: Sendable, Hashable, Codable {
        /// The pull's query id (nil: not incremental).
        public var queryId: String?
        /// The page's number in its pull (1 for the first).
        public var page: Int
        /// The token before and after the page, as `updatedAt id` (nil: none yet).
        public var tokenBefore: String?
        public var tokenAfter: String?
    }

    /// Its place in the history: later events have larger numbers.
    public var sequence: Int64
    /// When it happened.
    public var recordedAt: Date
    /// What happened.
    public var kind: Kind
    /// The queued operation it concerns, if any.
    public var operationId: Int64?
    /// The HTTP status the service answered, if any.
    public var status: Int?
    /// The version the event left (pushed: the service's new one; pulled: the copy's; conflict: the
    /// service's current one).
    public var version: String?
    /// The version a push was sent against.
    public var previousVersion: String?
    /// A local edit's changed columns (an insert: every column it set).
    public var values: Item?
    /// More words: how an edit joined the queue, the service's message, the operation's kind...
    public var detail: String?
    /// The journal entry of a decision (nil when the journal no longer keeps it).
    public var journalEntry: JournalEntry?
    /// The pull page of a pulled event.
    public var pullPage: PullPage?
}

/// Why a row is as it is: its events, oldest first, and one sentence about its state now.
public struct ItemHistory: Sendable, Hashable, Codable {
    /// The row's table and id.
    public var table: String
    public var itemId: String
    /// One sentence saying why the row is as it is now.
    public var explanation: String
    /// Every kept event that touched the row (and the table-wide ones since its first), oldest first.
    public var events: [HistoryEvent]
    /// The local row now (nil: none on this device).
    public var row: Item?
    /// The row's queued change, if any.
    public var operation: TableOperation?
}
