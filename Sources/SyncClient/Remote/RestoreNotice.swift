import Foundation
import SyncProtocol

/// What a store learned the last time its service went back in time (a new ``ServiceEpoch``), for
/// the dashboard's banner and `client status`: where the service went back to, when this store
/// noticed, and what the reconcile found. The conflicts it made are counted live from the queue.
public struct RestoreNotice: Sendable, Hashable, Codable {
    /// The service's new epoch.
    public var epoch: ServiceEpoch
    /// When this store reconciled with the restored service.
    public var reconciledAt: Date
    /// Rows this store had synced that the service no longer had.
    public var gone: Int
    /// Rows the service held older values of.
    public var older: Int
    /// Rows the reconcile brought in from the service (changed there, or new to this store).
    public var taken: Int

    /// A notice of a reconcile with the service's new `epoch`.
    public init(epoch: ServiceEpoch, reconciledAt: Date, gone: Int, older: Int, taken: Int) {
        self.epoch = epoch
        self.reconciledAt = reconciledAt
        self.gone = gone
        self.older = older
        self.taken = taken
    }

    /// The moment the service's data went back to (nil: the service did not say).
    public var restoredTo: Date? {
        epoch.restoredTo.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}
