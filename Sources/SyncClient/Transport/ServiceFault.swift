import HTTPTypes

/// What a misbehaving table service did, named so the user can tell its operator.
///
/// Push and pull check every answer against what they asked; an answer that breaks the protocol ends
/// the push or pull with ``SyncError/serviceFault(_:)`` and nothing from that answer is written.
public enum ServiceFault: Error, Sendable, Hashable, CustomStringConvertible {
    /// A push answer (`status`) carried another item than the one sent.
    case answerAboutAnotherItem(status: HTTPResponse.Status, sent: String, received: String)
    /// A pulled page held a row before the cursor the pull asked for: the service ignored `$filter`.
    case ignoredFilter(table: String, rowId: String)
    /// A pulled page was not in `(updatedAt, id)` order: `updatedAt` went from `from` back to `to`.
    case updatedAtWentBackwards(table: String, from: String, to: String)
    /// The service sent rows it had already sent, page after page, without getting further.
    case repeatedPages(table: String)
    /// A pulled row does not match the pull's query.
    case rowOutsideQuery(table: String, rowId: String)
    /// An answer was larger than the client reads (`limit` bytes).
    case answerTooLarge(limit: Int)

    /// What the service did and what the user can do.
    public var description: String {
        switch self {
        case .answerAboutAnotherItem(let status, let sent, let received):
            "The service answered the push of '\(sent)' (HTTP \(status.code)) with another item, '\(received)'. "
                + "Nothing was written; the change stays queued. The service is not a compatible table service."
        case .ignoredFilter(let table, let rowId):
            "Pull of '\(table)' stopped: the service sent row '\(rowId)', which is before the point the pull asked "
                + "for (it ignores $filter). The rows received so far are kept; check the service."
        case .updatedAtWentBackwards(let table, let from, let to):
            "Pull of '\(table)' stopped: the service's rows went back in time (updatedAt \(from), then \(to)) "
                + "although they were asked for in order. The rows received so far are kept; check the service."
        case .repeatedPages(let table):
            "Pull of '\(table)' stopped: the service kept sending rows it had already sent (its paging is broken). "
                + "The rows received so far are kept; check the service."
        case .rowOutsideQuery(let table, let rowId):
            "Pull of '\(table)' stopped: the service sent row '\(rowId)', which does not match the query asked for. "
                + "The rows received so far are kept; check the service."
        case .answerTooLarge(let limit):
            "The service's answer was larger than \(limit / (1 << 20)) MB, more than any valid answer; it was not read. "
                + "Check the service's address."
        }
    }
}
