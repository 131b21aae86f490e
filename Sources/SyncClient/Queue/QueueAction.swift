/// What a person can do to a stuck (or any) queued operation from the queue page, the API or the CLI.
public enum QueueAction: String, Sendable, Codable, CaseIterable {
    /// Keep it queued and out of every push (with the item's later operations) until released.
    case hold
    /// Let pushes send it again.
    case release
    /// Make a refused operation pending again and push now.
    case retry
    /// Drop it, losing that change.
    case discard
}

/// What one ``QueueAction`` does to one operation: the transition table of the hold machine and of
/// Retry now, as a pure function (``decide(_:state:isHeld:earlier:)``) that the queue applies.
public enum QueueActionRule: Sendable, Equatable {
    /// The action changes the operation.
    case apply
    /// The operation is already as the action would leave it (held, or not held).
    case unchanged
    /// The action does not fit the operation now; the error says what to do instead.
    case refuse(SyncError)

    /// The rule for `action` on operation `id` in `state`, held or not, with `earlier` the id of an
    /// earlier operation of the same item (nil when it is the item's first).
    public static func decide(
        _ action: QueueAction, id: Int64, state: OperationState, isHeld: Bool, earlier: Int64?
    ) -> QueueActionRule {
        switch (action, state) {
        case (_, .inFlight):
            // Nothing changes an operation on the wire; a held one is never sent, so never in flight.
            return .refuse(.operationInFlight(id))
        case (.discard, _):
            return .apply
        case (.release, _):
            return isHeld ? .apply : .unchanged
        case (.hold, .conflict), (.retry, .conflict):
            return .refuse(.operationInConflict(id))
        case (.hold, .pending), (.hold, .attempted), (.hold, .failed):
            return isHeld ? .unchanged : .apply
        case (.retry, .pending), (.retry, .attempted), (.retry, .failed):
            if isHeld { return .refuse(.operationHeld(id)) }
            if let earlier { return .refuse(.operationWaitsBehind(id, earlier: earlier)) }
            return .apply
        }
    }
}

/// What became of one operation of a bulk action.
public struct QueueActionResult: Sendable, Hashable, Codable {
    /// How it ended for this operation.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The action changed it.
        case done
        /// It was already as the action would leave it.
        case unchanged
        /// The action did not fit it (``QueueActionResult/message`` says why and what to do).
        case refused
    }

    /// The operation's id.
    public var id: Int64
    public var outcome: Outcome
    /// Why it was refused (nil otherwise).
    public var message: String?
}
