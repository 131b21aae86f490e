import HTTPTypes
import SyncProtocol

/// What one push attempt sends for an operation, fixed when the operation goes on the wire.
///
/// The input of ``PushDecision/decide(_:_:)`` together with the service's ``PushReply``.
struct PushAttempt: Sendable, Hashable {
    /// The operation being sent.
    var operationId: Int64
    /// The item's table.
    var table: String
    /// The item's id.
    var itemId: String
    /// What is sent: insert (POST), update (PATCH in v2, PUT in v3) or delete (DELETE).
    var kind: OperationKind
    /// The insert or update body (the row's user columns, plus `id` for inserts); nil for deletes.
    var body: Item?
    /// The version sent as `If-Match` (updates and deletes).
    var ifMatch: String?
    /// The row as it was when deleted (deletes): the values the service should still hold.
    var snapshot: Item?
    /// Bodies sent by earlier attempts of this operation whose answers may have been lost, newest first.
    var earlierBodies: [Item] = []
    /// Use Client re-creating an item the service deleted: a gone item is undeleted, not a conflict.
    var recreate = false
    /// The operation's queue row as it was before the attempt began: what an attempt that is not sent
    /// after all puts back (``SyncOperationQueue/release(_:)``).
    var before: OperationMark?

    /// Every user column of the row an insert or update sends (the body may hold only the changed ones).
    var row: Item?

    /// The row sent (every user column), or the deleted row: what an error row records as the client's side.
    var clientItem: Item? { row ?? body ?? snapshot }
}

/// What beginning an attempt changes in an operation's queue row, as it was before.
struct OperationMark: Sendable, Hashable {
    var state: OperationState
    var lastAttemptAt: String?
    var item: String?
    var earlierBodies: String?
}

/// One answer of the service, as the push machine sees it.
struct PushReply: Sendable, Hashable {
    /// Which request it answers.
    enum Request: Sendable, Hashable {
        /// The operation's own request (POST, PATCH or DELETE).
        case write
        /// The `GET` of the item, asked after an answer (`status`) that did not carry it.
        case fetch(afterStatus: HTTPResponse.Status)
        /// The `POST /tables/{table}/{id}` that undeletes the item (Use Client over a delete).
        case undelete
    }

    /// Which request it answers.
    var request: Request
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// The body when it is a JSON object with a string `id`; nil otherwise.
    var item: Item?
    /// The service's message (`{"error": ...}` or the body's text).
    var message: String

    /// Why this answer stops the push (nil: it does not), as every answer of the service is read.
    var stopReason: StopReason? { StopReason(answer: status, message: message) }

    /// ``item`` when it is a stored item (it has a `version`).
    var storedItem: Item? {
        guard let item, item[SystemColumn.version]?.stringValue != nil else { return nil }
        return item
    }
}

/// What an answer of the service means for the operation that was sent: the push state machine.
///
/// ``decide(_:_:)`` is pure: no store, no network. The ``PushDriver`` performs what it returns.
/// The last three cases ask the driver for one more request and feed its answer back in.
enum PushDecision: Sendable, Equatable {
    /// The service applied the change; `serverItem` (when the answer carried it) goes into the row.
    case done(serverItem: Item?)
    /// The service already holds exactly what was sent: an earlier answer was lost.
    case alreadyApplied(serverItem: Item)
    /// The service holds another version of the item (409 or 412).
    case conflict(serverItem: Item, status: HTTPResponse.Status)
    /// The item is gone from the service.
    case deletedOnServer(status: HTTPResponse.Status)
    /// The service refused the change (400 or another 4xx); push goes on with the other operations.
    case failed(status: HTTPResponse.Status, message: String)
    /// Push stops until the user acts: access refused, or the service broke the protocol.
    case stop(SyncError)
    /// The service cannot settle it now (timeout, overload, 5xx, an unreadable answer): push stops and
    /// the operation is retried by the next push.
    case retryLater(StopReason, status: HTTPResponse.Status)
    /// The answer did not carry the item: `GET` it and decide on that answer.
    case fetchServerItem
    /// An earlier attempt of ours reached the service (its answer was lost) and the local values changed
    /// since: send the operation again over `serverItem`'s version.
    case resend(over: Item)
    /// Use Client for an item the service deleted: undelete it (`POST /tables/{table}/{id}`).
    case recreate
    /// The service undeleted the item: send the values as an update of `undeleted`'s version.
    case updateUndeleted(Item)

    /// The meaning of `reply` for `attempt`.
    static func decide(_ attempt: PushAttempt, _ reply: PushReply) -> PushDecision {
        if let received = reply.item?[SystemColumn.id]?.stringValue, received != attempt.itemId {
            return .stop(
                .serviceFault(
                    .answerAboutAnotherItem(status: reply.status, sent: attempt.itemId, received: received)))
        }
        switch reply.request {
        case .write: return answered(attempt, reply)
        case .fetch(let status): return fetched(attempt, reply, after: status)
        case .undelete: return undeleted(reply)
        }
    }

    /// The answer to the operation's own request.
    private static func answered(_ attempt: PushAttempt, _ reply: PushReply) -> PushDecision {
        switch reply.status.code {
        case 200..<300:
            if attempt.kind == .delete { return .done(serverItem: nil) }
            // Applied, but an answer without the stored item leaves the row without the new version: ask.
            guard let stored = reply.storedItem else { return .fetchServerItem }
            return .done(serverItem: stored)
        case 404, 410:  // 410: Datasync's answer about a deleted item
            switch attempt.kind {
            case .delete: return .done(serverItem: nil)
            case .update: return .deletedOnServer(status: reply.status)
            case .insert: return .failed(status: reply.status, message: reply.message)
            }
        case 409, 412:
            guard let stored = reply.storedItem else { return .fetchServerItem }
            return settle(attempt, serverItem: stored, status: reply.status)
        default:
            guard let reason = reply.stopReason else {
                return .failed(status: reply.status, message: reply.message)
            }
            if case .notAuthorized = reason { return .stop(.stopped(reason)) }
            return .retryLater(reason, status: reply.status)
        }
    }

    /// The answer to the `GET` of the item, asked after `status`.
    private static func fetched(
        _ attempt: PushAttempt, _ reply: PushReply, after status: HTTPResponse.Status
    ) -> PushDecision {
        let applied = status.kind == .successful
        switch reply.status.code {
        case 200:
            guard let stored = reply.storedItem else {
                // Not "deleted on the server": the answer was unreadable. A retry asks again.
                return .retryLater(
                    .serverError(status: .ok, message: "its answer to GET was not the stored item"), status: .ok)
            }
            return applied ? .done(serverItem: stored) : settle(attempt, serverItem: stored, status: status)
        case 404, 410:
            guard !applied else {
                // It said the change was applied, yet has no such item: believe neither; retry later.
                return .retryLater(
                    .serverError(
                        status: status, message: "its answer to \(attempt.kind.rawValue) was not the stored item"),
                    status: status)
            }
            return gone(attempt, status: status)
        default:
            switch reply.stopReason {
            case .notAuthorized(let status, let message)?:
                return .stop(.stopped(.notAuthorized(status: status, message: message)))
            default:
                return .retryLater(
                    .serverError(status: reply.status, message: reply.message), status: reply.status)
            }
        }
    }

    /// The answer to the undelete: the undeleted item, or a refusal.
    private static func undeleted(_ reply: PushReply) -> PushDecision {
        guard reply.status.kind == .successful, let item = reply.storedItem else {
            return .failed(status: reply.status, message: reply.message)
        }
        return .updateUndeleted(item)
    }

    /// A 409/412 with the service's copy of the item.
    private static func settle(_ attempt: PushAttempt, serverItem: Item, status: HTTPResponse.Status) -> PushDecision {
        if serverItem[SystemColumn.deleted] == .bool(true) {
            // The service's copy is soft-deleted: for us the item is gone.
            return gone(attempt, status: status)
        }
        if let body = attempt.body, matches(body, serverItem) {
            return .alreadyApplied(serverItem: serverItem)
        }
        if attempt.kind != .delete, attempt.earlierBodies.contains(where: { matches($0, serverItem) }) {
            return .resend(over: serverItem)
        }
        if attempt.kind == .delete, let snapshot = attempt.snapshot, matches(snapshot, serverItem),
            snapshot[SystemColumn.version] != serverItem[SystemColumn.version]
        {
            // The service holds the deleted values at a newer version: our own earlier update whose
            // answer was lost. Delete that version.
            return .resend(over: serverItem)
        }
        return .conflict(serverItem: serverItem, status: status)
    }

    /// The service no longer has the item.
    private static func gone(_ attempt: PushAttempt, status: HTTPResponse.Status) -> PushDecision {
        switch attempt.kind {
        case .delete: .done(serverItem: nil)
        case .insert where attempt.recreate: .recreate
        case .insert, .update: .deletedOnServer(status: status)
        }
    }

    /// Whether the service's item holds every value sent (`id` and system columns aside).
    static func matches(_ sent: Item, _ server: Item) -> Bool {
        for (key, value) in sent where key != SystemColumn.id && !SystemColumn.all.contains(key) {
            let other = server[key] ?? .null
            if value == other { continue }
            switch (value, other) {
            case (.bool(let flag), .number(let number)), (.number(let number), .bool(let flag)):
                if (number != 0) == flag { continue }
            default: break
            }
            return false
        }
        return true
    }
}
