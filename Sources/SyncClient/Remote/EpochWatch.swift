import Foundation
import SyncProtocol
import Synchronization

/// The newest ``ServiceEpoch`` the service's answers carried, shared by every copy of a transport
/// (one per protocol or token) so that any answer tells the sync jobs that follow.
final class EpochWatch: Sendable {
    private let latest = Mutex<ServiceEpoch?>(nil)

    /// The epoch of the last answer that carried one; nil before any did (or from a service that
    /// keeps none).
    var epoch: ServiceEpoch? { latest.withLock { $0 } }

    /// Notes the epoch an answer carried in `header` (nothing when it carried none it can read).
    func observe(_ header: String?) {
        guard let header, let epoch = ServiceEpoch(header: header) else { return }
        latest.withLock { $0 = epoch }
    }
}
