import Foundation
import SyncProtocol

/// One conflict outcome as the journal (`__journal`) keeps it: the four copies of the item, who or
/// what decided, and the service's versions before and after.
public struct JournalEntry: Sendable, Hashable, Codable, Identifiable {
    /// What was decided.
    public enum Decision: String, Sendable, Hashable, Codable, CaseIterable {
        /// The local values (or the local delete) went to the service over its version.
        case useClient = "use-client"
        /// The service's values (or its delete) replaced the local change.
        case useServer = "use-server"
        /// Fields changed on one side only were merged and pushed with the service's version.
        case merge
        /// A person chose each colliding field from client, server or base.
        case pick
        /// A person overturned an earlier entry: its losing values were pushed.
        case overturn

        /// How the decision reads in lists ("Use Client").
        public var label: String {
            switch self {
            case .useClient: "Use Client"
            case .useServer: "Use Server"
            case .merge: "Merged"
            case .pick: "Picked per field"
            case .overturn: "Overturned"
            }
        }
    }

    /// Who or what decided.
    public enum Decider: String, Sendable, Hashable, Codable, CaseIterable {
        /// A person, on the conflict page, the JSON API or the command line.
        case person
        /// The table's merge policy (one-sided changes merge by themselves).
        case merge = "merge-policy"
        /// The table's server-wins policy.
        case serverWins = "server-wins-policy"
        /// The table's client-wins policy.
        case clientWins = "client-wins-policy"

        /// "a person", "the merge policy"...
        public var label: String {
            switch self {
            case .person: "a person"
            case .merge: "the merge policy"
            case .serverWins: "the server-wins policy"
            case .clientWins: "the client-wins policy"
            }
        }
    }

    /// The entry's stable id (a UUID): what `overturn` takes.
    public var id: String
    /// Its place in the journal: later entries have larger numbers.
    public var sequence: Int64
    /// The item's table.
    public var table: String
    /// The item's id.
    public var itemId: String
    /// The local operation that met the conflict.
    public var operation: OperationKind
    /// The last server copy the local change started from (nil for an insert).
    public var base: Item?
    /// The local copy (nil for a local delete).
    public var client: Item?
    /// The service's copy at the time (nil when the service had deleted it).
    public var server: Item?
    /// The item after the decision (nil when the outcome is a delete).
    public var result: Item?
    /// What was decided.
    public var decision: Decision
    /// Who or what decided.
    public var decidedBy: Decider
    /// The service's version the decision was taken against.
    public var versionBefore: String?
    /// The service's version after the decision (nil when the item is deleted).
    public var versionAfter: String?
    /// When it was decided.
    public var recordedAt: Date
    /// The bulk decision this entry belongs to, if any (undone together).
    public var batch: String?
    /// The entry this one overturned, if any.
    public var overturns: String?

    /// What overturning this entry would put on the service: the values that lost (nil: delete it).
    public var losingValues: Item? {
        switch decision {
        case .useServer: client
        case .useClient, .merge, .pick, .overturn: server
        }
    }
}

/// A page of the journal, newest first.
public struct JournalPage: Sendable, Hashable {
    /// The entries, newest first.
    public var entries: [JournalEntry]
    /// The `before` of the next (older) page; nil on the last page.
    public var next: Int64?
}

/// Which journal entries to list: filters and a keyset cursor.
public struct JournalQuery: Sendable, Hashable {
    /// Only entries with this decision.
    public var decision: JournalEntry.Decision?
    /// Only entries of this item id.
    public var itemId: String?
    /// Only entries whose values contain this text (case-insensitive for ASCII).
    public var text: String?
    /// Only entries of this bulk decision.
    public var batch: String?
    /// Only entries older than this sequence number (the previous page's ``JournalPage/next``).
    public var before: Int64?
    /// Entries per page, 1 to 100.
    public var limit: Int

    /// A query; `limit` is clamped to 1...100.
    public init(
        decision: JournalEntry.Decision? = nil, itemId: String? = nil, text: String? = nil, batch: String? = nil,
        before: Int64? = nil, limit: Int = 50
    ) {
        self.decision = decision
        self.itemId = itemId.flatMap { $0.isEmpty ? nil : $0 }
        self.text = text.flatMap { $0.isEmpty ? nil : $0 }
        self.batch = batch.flatMap { $0.isEmpty ? nil : $0 }
        self.before = before
        self.limit = min(100, max(1, limit))
    }
}
