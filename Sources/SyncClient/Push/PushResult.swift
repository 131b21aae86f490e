/// What a push did, by operation id.
public struct PushResult: Sendable, Hashable, Codable {
    /// Operations the server accepted (they left the queue).
    public var pushed: [Int64] = []
    /// Operations now in conflict (see ``SyncContext/conflicts()``).
    public var conflicts: [Int64] = []
    /// Operations the server refused (400 or another 4xx); see ``SyncContext/operations(table:)``.
    public var failed: [Int64] = []
    /// Conflicts settled at once by the conflict policy (server wins).
    public var resolved: [Int64] = []
    /// Operations not sent because an earlier change of the same item waits for a resolution.
    public var skipped: [Int64] = []

    /// An empty result.
    public init() {}

    mutating func add(_ outcome: OperationOutcome, _ id: Int64) {
        switch outcome {
        case .pushed: pushed.append(id)
        case .conflict: conflicts.append(id)
        case .failed: failed.append(id)
        case .resolvedByServer: resolved.append(id)
        case .skipped: skipped.append(id)
        }
    }

    /// What became of operation `id`; nil when this push did not settle it.
    func outcome(of id: Int64) -> OperationOutcome? {
        if pushed.contains(id) { return .pushed }
        if conflicts.contains(id) { return .conflict }
        if failed.contains(id) { return .failed }
        if resolved.contains(id) { return .resolvedByServer }
        if skipped.contains(id) { return .skipped }
        return nil
    }

    /// Sorts each list by operation id, which is queue order (outcomes may come in another order).
    mutating func sortInQueueOrder() {
        for keyPath in [\PushResult.pushed, \.conflicts, \.failed, \.resolved, \.skipped]
            as [WritableKeyPath<PushResult, [Int64]>]
        {
            self[keyPath: keyPath].sort()
        }
    }

    /// "Pushed 4 changes, 1 conflict to resolve": the one wording of what a push did, which
    /// ``JobOutcome/sentence`` and the last sync's ``SyncSummary/message`` use too.
    public var summary: String {
        Self.summary(
            pushed: pushed.count, conflicts: conflicts.count, failed: failed.count, resolved: resolved.count,
            skipped: skipped.count)
    }

    /// The wording of a push's counts (see ``summary``).
    static func summary(pushed: Int, conflicts: Int, failed: Int, resolved: Int = 0, skipped: Int = 0) -> String {
        var text = "Pushed \(pushed) change\(pushed == 1 ? "" : "s")"
        if conflicts > 0 { text += ", \(conflicts) conflict\(conflicts == 1 ? "" : "s") to resolve" }
        if failed > 0 { text += ", \(failed) refused by the server" }
        if resolved > 0 { text += ", \(resolved) settled by the server's value" }
        if skipped > 0 { text += ", \(skipped) waiting behind a conflict" }
        return text
    }
}

/// What happened to one operation when it was sent.
public enum OperationOutcome: String, Sendable, Hashable, Codable {
    /// The server accepted it; it left the queue.
    case pushed
    /// The server holds another version; the operation waits for a resolution.
    case conflict
    /// The server refused it.
    case failed
    /// In conflict, and the server-wins policy replaced the local change.
    case resolvedByServer
    /// Not sent (an earlier change of the same item waits, or it is no longer queued).
    case skipped
}
