import Foundation
import GRDB
import HTTPTypes
import SyncProtocol

/// Sends one begun attempt and applies the ``PushDecision``s of the service's answers until the
/// operation is settled or the push must stop; stores applied answers.
///
/// The one place where answers change the queue. Every push is a ``PushRun`` whose requests go out
/// through ``settle(_:applyingPolicy:)`` and whose answers are stored by
/// ``store(_:recording:thenBegin:)``: a push of the whole queue, and the one-operation runs of Use
/// Client, a per-field pick and an overturn. A conflict is recorded by the run's next transaction
/// with the answers it stores, and settled by its table's policy in that transaction when the run
/// asks for that; the run decides what comes next.
struct PushDriver: Sendable {
    /// The queue whose operations are sent.
    let queue: SyncOperationQueue
    /// The service's HTTP side.
    let transport: HTTPTransport
    /// Settles a conflict just recorded, in the transaction that records it, as its table's conflict
    /// policy says (see ``ConflictSettlement/settleByPolicy(_:_:)``).
    let conflictPolicy: @Sendable (Database, RecordedConflict) throws -> OperationOutcome?

    /// How many times one send follows a service back to an earlier attempt of ours before giving up.
    static let maximumResends = 3

    /// An answer saying that the service applied an operation.
    struct AppliedAnswer: Sendable, Hashable {
        /// The operation the service applied.
        var operationId: Int64
        /// The item the service answered with, when it carried one.
        var serverItem: Item?
    }

    /// An answer saying that the service holds another version of the item (`serverItem`), or none.
    struct ConflictAnswer: Sendable, Hashable {
        /// The operation in conflict.
        var operationId: Int64
        /// The service's copy; nil when it deleted the item.
        var serverItem: Item?
        /// The status of the answer (412, 409, 404…).
        var status: HTTPResponse.Status
        /// The values the attempt sent.
        var sent: Item?
        /// Whether the conflict goes to its table's policy (else it waits for a person).
        var applyingPolicy: Bool
    }

    /// What one transaction of the run did.
    struct Stored: Sendable, Equatable {
        /// The attempts begun, in the order asked (nil for one not to be sent now).
        var begun: [PushAttempt?] = []
        /// What became of each conflict recorded, in the order given.
        var decided: [PushRun.Decision] = []
    }

    /// Sends a begun attempt and applies the decisions on the service's answers until the operation
    /// is settled. A refusal is recorded here; an applied answer or a conflict is returned, to be
    /// stored with ``store(_:recording:thenBegin:)``. `applyingPolicy`: a conflict goes to its
    /// table's policy (else it waits for a person).
    func settle(_ begun: PushAttempt, applyingPolicy: Bool) async throws(SyncError) -> PushRun.Answer {
        let id = begun.operationId
        var attempt = begun
        var reply = try await write(attempt)
        var resends = 0
        while true {
            switch PushDecision.decide(attempt, reply) {
            case .done(let serverItem):
                return .applied(AppliedAnswer(operationId: id, serverItem: serverItem))
            case .alreadyApplied(let serverItem):
                return .applied(AppliedAnswer(operationId: id, serverItem: serverItem))
            case .conflict(let serverItem, let status):
                return .conflicted(
                    ConflictAnswer(
                        operationId: id, serverItem: serverItem, status: status, sent: attempt.clientItem,
                        applyingPolicy: applyingPolicy))
            case .deletedOnServer(let status):
                return .conflicted(
                    ConflictAnswer(
                        operationId: id, serverItem: nil, status: status, sent: attempt.clientItem,
                        applyingPolicy: applyingPolicy))
            case .failed(let status, let message):
                try await queue.recordFailure(id, status: status, message: message, sent: attempt.clientItem)
                return .settled(.failed)
            case .stop(let error):
                try await queue.markAttempted([id], message: error.description, status: reply.status)
                throw error
            case .retryLater(let reason, let status):
                try await queue.markAttempted([id], message: reason.description, status: status)
                throw .stopped(reason)
            case .fetchServerItem:
                reply = try await exchange(
                    attempt, .get, transport.path(table: attempt.table, id: attempt.itemId),
                    as: .fetch(afterStatus: reply.status))
            case .resend(let serverItem):
                resends += 1
                guard resends <= Self.maximumResends else {
                    let reason = StopReason.serverError(
                        status: reply.status, message: "it kept answering with versions it had already sent")
                    try await queue.markAttempted([id], message: reason.description, status: reply.status)
                    throw .stopped(reason)
                }
                guard let again = try await queue.rebaseAndBegin(id, over: serverItem) else {
                    return .settled(.skipped)
                }
                attempt = again
                reply = try await write(attempt)
            case .recreate:
                reply = try await undelete(attempt)
            case .updateUndeleted(let item):
                attempt.kind = .update
                attempt.recreate = false
                attempt.ifMatch = item[SystemColumn.version]?.stringValue
                attempt.body?[SystemColumn.id] = nil
                reply = try await write(attempt)
            }
        }
    }

    /// One transaction: stores applied answers, each item in its row (and a decision held with the
    /// operation is journaled); records the conflicts, each settled by its table's policy when it asks
    /// for that (an operation its policy sends again is begun again at once); then begins the attempts
    /// of the operations `next`. When that transaction fails,
    /// nothing of it is stored: the operations are left attempted, and the next push recognises their
    /// changes on the service (or meets the conflicts again) and completes them then.
    func store(
        _ answers: [AppliedAnswer], recording conflicts: [ConflictAnswer] = [], thenBegin next: [Int64] = []
    ) async throws(SyncError) -> Stored {
        guard !answers.isEmpty || !conflicts.isEmpty || !next.isEmpty else { return Stored() }
        let (queue, policy) = (self.queue, conflictPolicy)
        do {
            return try await queue.store.asyncWrite { db in
                try queue.complete(db, answers.map { ($0.operationId, $0.serverItem) })
                // Each conflict's outcome; nil when its policy sends it again (begun below, first).
                let outcomes = try conflicts.map { conflict -> OperationOutcome? in
                    guard
                        let met = try queue.meetConflict(
                            db, conflict.operationId, serverItem: conflict.serverItem, status: conflict.status,
                            sent: conflict.sent)
                    else { return .conflict }
                    // Only what the policy leaves is stored: a conflict it settles is never written as one.
                    let outcome = conflict.applyingPolicy ? try policy(db, met) : .conflict
                    if outcome == .conflict { try queue.keepWaiting(db, met) }
                    return outcome
                }
                let again = zip(conflicts, outcomes).compactMap { $1 == nil ? $0.operationId : nil }
                let begun = try queue.beginAttempts(db, ids: again + next)
                var resent = begun.prefix(again.count).makeIterator()
                let decided = outcomes.map { outcome -> PushRun.Decision in
                    if let outcome { return .settled(outcome) }
                    guard let attempt = resent.next() ?? nil else { return .settled(.skipped) }
                    return .resend(attempt)
                }
                return Stored(begun: Array(begun.dropFirst(again.count)), decided: decided)
            }
        } catch {
            let unstored = answers.map(\.operationId) + conflicts.map(\.operationId)
            try? await queue.markAttempted(unstored, message: error.description, status: nil)
            throw error
        }
    }

    /// The operation's own request: POST, PATCH or DELETE.
    /// POST, then PATCH with the changed columns (v2) or PUT with the whole row (v3), or DELETE.
    private func write(_ attempt: PushAttempt) async throws(SyncError) -> PushReply {
        let path = transport.path(table: attempt.table, id: attempt.kind == .insert ? nil : attempt.itemId)
        switch (attempt.kind, transport.tableProtocol) {
        case (.insert, _):
            return try await exchange(attempt, .post, path, body: attempt.body?.jsonData, as: .write)
        case (.update, .v2):
            return try await exchange(
                attempt, .patch, path, body: attempt.body?.jsonData, ifMatch: attempt.ifMatch, as: .write)
        case (.update, .v3):
            return try await exchange(
                attempt, .put, path, body: Self.replacement(attempt), ifMatch: attempt.ifMatch, as: .write)
        case (.delete, _):
            return try await exchange(attempt, .delete, path, ifMatch: attempt.ifMatch, as: .write)
        }
    }

    /// The body of a v3 PUT, which replaces the whole item: every user column of the row, and its id.
    private static func replacement(_ attempt: PushAttempt) -> Data? {
        var item = attempt.row ?? attempt.body ?? [:]
        item[SystemColumn.id] = .string(attempt.itemId)
        return item.jsonData
    }

    /// Brings back an item the service deleted (Use Client over its delete): v2 has an undelete
    /// (`POST /tables/{table}/{id}`); v3 replaces the deleted item, which a PUT that includes deleted
    /// items does. The answer is the item brought back, which the values then update.
    private func undelete(_ attempt: PushAttempt) async throws(SyncError) -> PushReply {
        let path = transport.path(table: attempt.table, id: attempt.itemId)
        switch transport.tableProtocol {
        case .v2:
            return try await exchange(attempt, .post, path, body: Data("{}".utf8), as: .undelete)
        case .v3:
            return try await exchange(
                attempt, .put, path, query: [(TableProtocol.v3.includeDeletedParameter, "true")],
                body: Self.replacement(attempt), as: .undelete)
        }
    }

    /// One request; a failed exchange leaves the operation attempted and stops the push.
    private func exchange(
        _ attempt: PushAttempt, _ method: HTTPRequest.Method, _ path: String, query: [(String, String)] = [],
        body: Data? = nil, ifMatch: String? = nil, as request: PushReply.Request
    ) async throws(SyncError) -> PushReply {
        let reply: HTTPReply
        do {
            reply = try await transport.send(
                method, path, query: query, body: body, ifMatch: ifMatch,
                for: .push(operationId: attempt.operationId, table: attempt.table, itemId: attempt.itemId))
        } catch {
            try await queue.markAttempted([attempt.operationId], message: error.description, status: nil)
            throw error
        }
        let applied = reply.status.kind == .successful
        return PushReply(
            request: request, status: reply.status, item: ItemCoding.item(from: reply.body, requireVersion: false),
            message: applied ? "" : reply.message)
    }
}
