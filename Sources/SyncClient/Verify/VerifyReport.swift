import Foundation

/// One row where the local table and the service disagree, and why.
public struct RowDifference: Sendable, Hashable, Codable {
    /// How the two copies differ.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The service has the row; the local table does not.
        case missingLocally = "missing-locally"
        /// The local table has the row; the service has no such row, not even deleted.
        case missingOnService = "missing-on-service"
        /// The service deleted the row; the local table still has it.
        case deletedOnService = "deleted-on-service"
        /// Both have the row, with another version or update time.
        case differentVersion = "different-version"
        /// Both have the row with the same version and update time, but other values: changed by
        /// hand or by a bug on one side, or brought back by a restore (``RowDifference/columns`` names them).
        case differentValues = "different-values"
    }

    /// Why they differ, as far as the store can tell.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The row waits in conflict for a decision.
        case conflict
        /// A local change of the row is queued and not pushed yet.
        case pendingChange = "pending-change"
        /// The service changed the row after the last pull: the next pull brings it.
        case notPulledYet = "not-pulled-yet"
        /// No reason at all: a silent divergence, which sync should never leave behind.
        case none

        /// "a queued local change"...
        public var label: String {
            switch self {
            case .conflict: "waits in conflict"
            case .pendingChange: "a local change is queued"
            case .notPulledYet: "changed on the service after the last pull"
            case .none: "no reason: a silent divergence"
            }
        }
    }

    /// The row's id.
    public var id: String
    public var kind: Kind
    public var reason: Reason
    /// The local copy's version and update time (nil: no local row).
    public var localVersion: String?
    public var localUpdatedAt: String?
    /// The service's copy's version and update time (nil: no row on the service).
    public var serviceVersion: String?
    public var serviceUpdatedAt: String?
    /// The columns whose values differ (``Kind/differentValues``), in name order; empty otherwise.
    public var columns: [String] = []
}

/// What ``SyncContext/verify(_:pageSize:)`` found: every difference, silent divergences first.
public struct VerifyReport: Sendable, Hashable, Codable {
    /// The table compared.
    public var table: String
    /// Rows read on each side (the service's deleted rows included).
    public var localRows: Int
    public var serviceRows: Int
    /// Every row that differs, those without a reason first, then by id.
    public var differences: [RowDifference]
    /// When the comparison ended.
    public var finishedAt: Date

    /// The differences with no reason: what sync should never leave behind.
    public var silentDivergences: [RowDifference] { differences.filter { $0.reason == .none } }

    /// "todoitem: 1,000 local rows, 1,002 on the service (deleted included); 2 rows differ, each with a reason."
    public var summary: String {
        let silent = silentDivergences.count
        var text =
            "\(table): \(localRows.formatted()) local rows, \(serviceRows.formatted()) on the service (deleted included); "
        if differences.isEmpty {
            text += "they match."
        } else {
            let count = differences.count
            text += count == 1 ? "1 row differs, " : "\(count.formatted()) rows differ, "
            text +=
                silent == 0
                ? (count == 1 ? "with a reason." : "each with a reason.")
                : "\(silent.formatted()) with no reason (silent divergence)."
        }
        return text
    }
}
