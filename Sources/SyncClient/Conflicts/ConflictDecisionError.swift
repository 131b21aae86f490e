/// Why a per-field pick, an overturn or a bulk decision cannot be carried out.
public enum ConflictDecisionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A per-field pick needs both the local and the server copy.
    case pickNeedsBothCopies(Int64)
    /// The picks do not fit the item's fields.
    case pick(PickError)
    /// No journal entry has this id (it may be older than the journal keeps).
    case entryNotFound(String)
    /// The item has a newer local change, so overturning would overwrite it.
    case newerLocalChange(entry: String, itemId: String)
    /// Both the outcome and the side that lost deleted the item: there is nothing to bring back.
    case nothingToOverturn(entry: String, itemId: String)
    /// No journal entry belongs to this bulk decision.
    case batchNotFound(String)
    /// A bulk decision takes Use Client or Use Server.
    case bulkNeedsUseClientOrServer

    /// What happened and what the user can do.
    public var description: String {
        switch self {
        case .pickNeedsBothCopies(let id):
            "Change #\(id) is a delete against an edit: there are no fields to pick. Choose one of its two buttons."
        case .pick(let error):
            error.description
        case .entryNotFound(let id):
            "No journal entry '\(id)'. It may be older than the journal keeps; list the journal for current ids."
        case .newerLocalChange(let entry, let itemId):
            "Entry \(entry) cannot be overturned: '\(itemId)' has a newer local change. Push or discard that change first."
        case .nothingToOverturn(let entry, let itemId):
            "Entry \(entry) cannot be overturned: both sides deleted '\(itemId)', so there is nothing to bring back."
        case .batchNotFound(let batch):
            "No journal entries belong to the bulk decision '\(batch)'; it may be older than the journal keeps."
        case .bulkNeedsUseClientOrServer:
            "A bulk decision is Use Client or Use Server."
        }
    }
}
