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
