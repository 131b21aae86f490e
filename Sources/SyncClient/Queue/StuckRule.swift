import Foundation

/// Which queued operations are stuck, defined in one place: the queue page shows them first and
/// offers Retry now, Hold and Discard for them.
public enum StuckRule {
    /// Why an operation is stuck.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The service refused it (400 or another 4xx): it waits for Retry now, an edit or Discard.
        case refused
        /// Sent, and no answer came (or the push stopped): each push tries again and it keeps failing.
        case failing
        /// Queued longer than ``StuckRule/age`` without reaching the service.
        case old
    }

    /// How long a queued change may wait before it counts as stuck: one hour.
    public static let age: TimeInterval = 60 * 60

    /// Why `operation` is stuck at `now`; nil when it is not. A held operation is parked on purpose
    /// and a conflict waits on the conflict page, so neither counts; an operation being sent neither.
    public static func reason(_ operation: TableOperation, now: Date = Date()) -> Reason? {
        guard !operation.isHeld else { return nil }
        switch operation.state {
        case .inFlight, .conflict: return nil
        case .failed: return .refused
        case .attempted: return operation.message == nil ? old(operation, now) : .failing
        case .pending: return old(operation, now)
        }
    }

    private static func old(_ operation: TableOperation, _ now: Date) -> Reason? {
        now.timeIntervalSince(operation.queuedAt) >= age ? .old : nil
    }
}
