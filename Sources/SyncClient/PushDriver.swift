import Foundation
import SyncProtocol

/// Sends one queued operation and applies the ``PushDecision``s of the service's answers until the
/// operation is settled or the push must stop.
///
/// The one place where answers change the queue: ``SyncContext/push()`` sends every queued operation
/// through ``send(_:)``, and Use Client (``SyncContext/useClient(_:)``) sends its one operation the
/// same way after ``SyncOperationQueue/adoptServerVersion(_:values:)``, as do the decisions of a
/// table's conflict policy (``SyncContext/applyPolicy(_:driver:)``). The driver calls none of them back:
/// a conflict is recorded and returned.
///
/// ```swift
/// let driver = PushDriver(queue: queue, transport: transport)
/// switch try await driver.send(operationId) { case .pushed: ...; case .conflict: ... }
/// ```
struct PushDriver: Sendable {
    /// The queue whose operations are sent.
    let queue: SyncOperationQueue
    /// The service's HTTP side.
    let transport: HTTPTransport

    /// How many times one send follows a service back to an earlier attempt of ours before giving up.
    static let maximumResends = 3

    /// Sends operation `id` and settles it: pushed, in conflict, refused, or skipped (no longer queued, or an earlier change of the item waits).
    ///
    /// - Throws: ``SyncError`` when the push must stop (unreachable, timed out, cancelled, 5xx,
    ///   401/403, a service that broke the protocol). The operation is then attempted: the next push
    ///   recognises it if the service applied it.
    func send(_ id: Int64) async throws(SyncError) -> OperationOutcome {
        try await send(id, begun: nil, thenBegin: nil).outcome
    }

    /// What sending one operation of a sequence gave: its outcome, and the attempt of the next
    /// operation when that began in the transaction that completed this one.
    struct Sent: Sendable {
        var outcome: OperationOutcome
        var nextAttempt: PushAttempt? = nil
    }

    /// Sends operation `id` (whose attempt may have begun already: `begun`) and settles it; when
    /// the service applied it, the attempt of operation `next` begins in the same transaction and is
    /// returned, to be passed as `begun` when `next` is sent. A caller that does not send it leaves
    /// it attempted (``SyncOperationQueue/markAttempted(_:message:status:)``).
    func send(_ id: Int64, begun: PushAttempt?, thenBegin next: Int64?) async throws(SyncError) -> Sent {
        precondition(begun == nil || begun?.operationId == id, "the attempt begun is of another operation")
        let first: PushAttempt?
        if let begun { first = begun } else { first = try queue.beginAttempt(id) }
        guard var attempt = first else { return Sent(outcome: .skipped) }
        var reply = try await write(attempt)
        var resends = 0
        while true {
            switch PushDecision.decide(attempt, reply) {
            case .done(let serverItem):
                let nextAttempt = try complete(id, serverItem: serverItem, status: reply.status, thenBegin: next)
                return Sent(outcome: .pushed, nextAttempt: nextAttempt)
            case .alreadyApplied(let serverItem):
                let nextAttempt = try complete(id, serverItem: serverItem, status: reply.status, thenBegin: next)
                return Sent(outcome: .pushed, nextAttempt: nextAttempt)
            case .conflict(let serverItem, let status):
                try queue.recordConflict(id, serverItem: serverItem, status: status, sent: attempt.clientItem)
                return Sent(outcome: .conflict)
            case .deletedOnServer(let status):
                try queue.recordConflict(id, serverItem: nil, status: status, sent: attempt.clientItem)
                return Sent(outcome: .conflict)
            case .failed(let status, let message):
                try queue.recordFailure(id, status: status, message: message, sent: attempt.clientItem)
                return Sent(outcome: .failed)
            case .stop(let error):
                try queue.markAttempted(id, message: error.description, status: reply.status)
                throw error
            case .retryLater(let reason, let status):
                try queue.markAttempted(id, message: reason.description, status: status)
                throw .stopped(reason)
            case .fetchServerItem:
                reply = try await exchange(
                    id, "GET", transport.path(table: attempt.table, id: attempt.itemId),
                    as: .fetch(afterStatus: reply.status))
            case .resend(let serverItem):
                resends += 1
                guard resends <= Self.maximumResends else {
                    let reason = StopReason.serverError(
                        status: reply.status, message: "it kept answering with versions it had already sent")
                    try queue.markAttempted(id, message: reason.description, status: reply.status)
                    throw .stopped(reason)
                }
                try queue.rebase(id, over: serverItem)
                guard let again = try queue.beginAttempt(id) else { return Sent(outcome: .skipped) }
                attempt = again
                reply = try await write(attempt)
            case .recreate:
                guard let recreated = try await undelete(attempt) else { return Sent(outcome: .failed) }
                attempt = recreated
                reply = try await write(attempt)
            }
        }
    }

    /// Applies the service's answer to the row (and journals a decision held with the operation). When
    /// that transaction fails, nothing of it is stored: the operation is left attempted, and the next
    /// push recognises the change on the service and completes it then.
    private func complete(
        _ id: Int64, serverItem: Item?, status: Int, thenBegin next: Int64?
    ) throws(SyncError) -> PushAttempt? {
        do {
            return try queue.complete(id, serverItem: serverItem, thenBegin: next)
        } catch {
            try? queue.markAttempted(id, message: error.description, status: status)
            throw error
        }
    }

    /// Use Client for an item the service deleted: `POST /tables/{table}/{id}` undeletes it; the values
    /// then go out as an update of the undeleted version. Nil when the service refused (recorded).
    private func undelete(_ attempt: PushAttempt) async throws(SyncError) -> PushAttempt? {
        let id = attempt.operationId
        let reply = try await exchange(
            id, "POST", transport.path(table: attempt.table, id: attempt.itemId), body: Data("{}".utf8), as: .write)
        if let received = reply.item?[SystemColumn.id]?.stringValue, received != attempt.itemId {
            let error = SyncError.serviceFault(
                .answerAboutAnotherItem(status: reply.status, sent: attempt.itemId, received: received))
            try queue.markAttempted(id, message: error.description, status: reply.status)
            throw error
        }
        guard (200..<300).contains(reply.status), let item = reply.storedItem else {
            try queue.recordFailure(id, status: reply.status, message: reply.message, sent: attempt.body)
            return nil
        }
        var next = attempt
        next.kind = .update
        next.recreate = false
        next.ifMatch = item[SystemColumn.version]?.stringValue
        next.body?[SystemColumn.id] = nil
        return next
    }

    /// The operation's own request: POST, PATCH or DELETE.
    private func write(_ attempt: PushAttempt) async throws(SyncError) -> PushReply {
        let method =
            switch attempt.kind {
            case .insert: "POST"
            case .update: "PATCH"
            case .delete: "DELETE"
            }
        return try await exchange(
            attempt.operationId, method,
            transport.path(table: attempt.table, id: attempt.kind == .insert ? nil : attempt.itemId),
            body: attempt.body?.jsonData, ifMatch: attempt.kind == .insert ? nil : attempt.ifMatch, as: .write)
    }

    /// One request; a failed exchange leaves the operation attempted and stops the push.
    private func exchange(
        _ id: Int64, _ method: String, _ path: String, body: Data? = nil, ifMatch: String? = nil,
        as request: PushReply.Request
    ) async throws(SyncError) -> PushReply {
        let reply: HTTPReply
        do {
            reply = try await transport.send(method, path, body: body, ifMatch: ifMatch)
        } catch {
            try queue.markAttempted(id, message: error.description, status: nil)
            throw error
        }
        let applied = (200..<300).contains(reply.status)
        return PushReply(
            request: request, status: reply.status, item: ItemCoding.item(from: reply.body, requireVersion: false),
            message: applied ? "" : reply.message)
    }
}
