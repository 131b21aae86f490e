import SyncProtocol

/// How a table's conflicts met during push are settled. Set per table with
/// ``Conflicts/setPolicy(_:for:)``; saved in the store.
public enum ConflictPolicy: String, Sendable, Codable, CaseIterable {
    /// Every conflict waits for a person (Use Client / Use Server / Cancel): the tutorial's behaviour.
    case ask
    /// Fields changed on one side only since the base merge by themselves; only fields changed on
    /// both sides to different values (and deletes against edits) wait for a person. The default.
    case merge
    /// The server's version replaces the local change at once.
    case serverWins
    /// The local change is sent again over the server's version (once per push).
    case clientWins

    /// What to do with a conflict whose three-way comparison came out as `merge`.
    public func action(for merge: MergeOutcome) -> PolicyAction {
        switch self {
        case .ask: return .ask
        case .serverWins: return .useServer
        case .clientWins: return .useClient
        case .merge:
            switch merge {
            case .merged(let item): return .pushMerged(item)
            case .serverHasEverything: return .useServer
            case .deleteStands: return .useClient
            case .collision, .serverDeletedClientEdited, .clientDeletedServerEdited: return .ask
            }
        }
    }
}

/// What push does with one conflict under the table's policy.
public enum PolicyAction: Sendable, Hashable {
    /// Leave it for a person.
    case ask
    /// Take the server's version (or its delete) and drop the local change.
    case useServer
    /// Send the local change again over the server's version.
    case useClient
    /// Send this merged item (the server's item with the local one-sided changes) with the server's version.
    case pushMerged(Item)
}
