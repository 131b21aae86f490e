/// What happens to the queued changes when a store moves to another service (see ``RemoteBinding``).
public enum RemoteSwitchChoice: String, Sendable, Hashable, Codable, CaseIterable {
    /// Keep every queued change and send it to the new service with the next push: inserts stay
    /// inserts, updates become inserts of the row as it is now (the new service never had the item;
    /// if it has an item with that id, the insert meets it as a conflict), deletes are sent as they
    /// are (a service without the item answers 404, which settles them). Conflicts and refusals of
    /// the old service are forgotten: their changes are pending again.
    case push
    /// Drop every queued change, conflict and refusal with the rows they kept.
    case discard
}

/// A switch to another service refused because the store still holds changes the old service has
/// not taken: the user chooses ``RemoteSwitchChoice/push`` or ``RemoteSwitchChoice/discard``.
public struct RemoteSwitchRefusal: Sendable, Hashable, Codable {
    /// The service the store is bound to.
    public var from: ServiceIdentity
    /// The service asked for.
    public var to: ServiceIdentity
    /// Changes waiting to be pushed (pending, attempted or in flight).
    public var pending: Int
    /// Changes in conflict with the old service.
    public var conflicts: Int
    /// Changes the old service refused.
    public var failed: Int

    /// Every queued change, whatever its state.
    public var total: Int { pending + conflicts + failed }

    /// "3 changes not yet pushed, 1 conflict and 1 refused change".
    public var counts: String {
        var parts: [String] = []
        if pending > 0 { parts.append("\(pending) change\(pending == 1 ? "" : "s") not yet pushed") }
        if conflicts > 0 { parts.append("\(conflicts) conflict\(conflicts == 1 ? "" : "s")") }
        if failed > 0 { parts.append("\(failed) refused change\(failed == 1 ? "" : "s")") }
        if parts.count < 2 { return parts.first ?? "no changes" }
        return parts.dropLast().joined(separator: ", ") + " and " + parts.last!
    }
}

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
