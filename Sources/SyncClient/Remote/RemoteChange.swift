/// What pointing a store at a service did (``SyncContext/setRemote(url:applicationKey:service:onSwitch:)``).
public enum RemoteChange: Sendable, Hashable {
    /// The store already syncs with this service (perhaps written another way); nothing was removed.
    case unchanged
    /// The store was bound to no service and is now bound to this one; nothing was removed.
    case bound(ServiceIdentity)
    /// The store moved from one service to another.
    case switched(RemoteSwitchReport)
    /// No service is set; the store stays bound to its service and keeps its rows.
    case cleared
}

/// What a switch to another service removed and kept.
public struct RemoteSwitchReport: Sendable, Hashable {
    /// The service the store was bound to.
    public var from: ServiceIdentity
    /// The service it is bound to now.
    public var to: ServiceIdentity
    /// Rows of the old service removed from the local tables.
    public var removedRows: Int
    /// Queued changes kept to be pushed to the new service.
    public var carriedOperations: Int
    /// Queued changes dropped.
    public var discardedOperations: Int

    /// "Now syncing with http://b:80 (was http://a:80): 500 rows of the old service removed; 2 changes will be pushed there."
    public var summary: String {
        var text =
            "Now syncing with \(to) (was \(from)): \(removedRows) row\(removedRows == 1 ? "" : "s") of the old service removed"
        if carriedOperations > 0 {
            text +=
                "; \(carriedOperations) change\(carriedOperations == 1 ? "" : "s") will be pushed to the new service"
        }
        if discardedOperations > 0 {
            text += "; \(discardedOperations) change\(discardedOperations == 1 ? "" : "s") discarded"
        }
        return text + ". Sync to fetch its rows."
    }
}
