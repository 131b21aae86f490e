import HTTPTypes
import SyncProtocol
import Testing

@testable import SyncClient

/// One row of the push state machine's table: an attempt, the service's answer, and its meaning.
struct PushDecisionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var attempt: PushAttempt
    var reply: PushReply
    var expected: PushDecision

    var testDescription: String { name }
}

private let body: Item = ["id": "a", "text": "mine", "complete": false]
private let stored: Item = ["id": "a", "text": "mine", "complete": false, "version": "v2", "updatedAt": "t2"]
private let theirs: Item = ["id": "a", "text": "theirs", "complete": false, "version": "v3"]
private let softDeleted: Item = ["id": "a", "text": "theirs", "version": "v3", "deleted": true]
private let victim: Item = ["id": "victim", "text": "not yours", "version": "v9"]
private let snapshot: Item = ["id": "a", "text": "mine", "complete": false, "version": "v1"]

private let insert = PushAttempt(operationId: 1, table: "todoitem", itemId: "a", kind: .insert, body: body)
private let update = PushAttempt(
    operationId: 1, table: "todoitem", itemId: "a", kind: .update, body: ["text": "mine", "complete": false],
    ifMatch: "v1")
private let delete = PushAttempt(
    operationId: 1, table: "todoitem", itemId: "a", kind: .delete, ifMatch: "v1", snapshot: snapshot)
private let recreate = PushAttempt(
    operationId: 1, table: "todoitem", itemId: "a", kind: .insert, body: body, recreate: true)
private let editedAfterLostAnswer = PushAttempt(
    operationId: 1, table: "todoitem", itemId: "a", kind: .insert, body: ["id": "a", "text": "edited"],
    earlierBodies: [body])

private func write(_ status: HTTPResponse.Status, _ item: Item? = nil, _ message: String = "") -> PushReply {
    PushReply(request: .write, status: status, item: item, message: message)
}

private func fetch(
    after status: HTTPResponse.Status, _ answer: HTTPResponse.Status, _ item: Item? = nil, _ message: String = ""
) -> PushReply {
    PushReply(request: .fetch(afterStatus: status), status: answer, item: item, message: message)
}

private func undelete(_ status: HTTPResponse.Status, _ item: Item?, _ message: String = "") -> PushReply {
    PushReply(request: .undelete, status: status, item: item, message: message)
}

private func anotherItem(_ status: HTTPResponse.Status) -> PushDecision {
    .stop(.serviceFault(.answerAboutAnotherItem(status: status, sent: "a", received: "victim")))
}

/// An answer about another item than the one sent stops the push, whatever was sent and whatever the status.
private let answersAboutAnotherItem: [PushDecisionCase] = [
    (insert, 201), (update, 200), (delete, 200), (insert, 409), (update, 412),
].map { (attempt: PushAttempt, status: HTTPResponse.Status) in
    PushDecisionCase(
        name: "\(attempt.kind.rawValue) \(status.code) about another item stops", attempt: attempt,
        reply: write(status, victim), expected: anotherItem(status))
}

let pushDecisionTable: [PushDecisionCase] =
    answersAboutAnotherItem + [
        // The operation's own request: success.
        .init(
            name: "insert 201 with the stored item is done", attempt: insert, reply: write(201, stored),
            expected: .done(serverItem: stored)),
        .init(
            name: "update 200 with the stored item is done", attempt: update, reply: write(200, stored),
            expected: .done(serverItem: stored)),
        .init(
            name: "delete 200 is done", attempt: delete, reply: write(200, softDeleted),
            expected: .done(serverItem: nil)),
        .init(
            name: "delete 204 without a body is done", attempt: delete, reply: write(204),
            expected: .done(serverItem: nil)),
        .init(
            name: "insert 201 whose body is not an item asks for the item", attempt: insert, reply: write(201),
            expected: .fetchServerItem),
        .init(
            name: "insert 201 with an item without version asks for the item", attempt: insert,
            reply: write(201, body), expected: .fetchServerItem),
        // 404.
        .init(name: "delete 404 is done", attempt: delete, reply: write(404), expected: .done(serverItem: nil)),
        .init(
            name: "update 404 is deleted on the server", attempt: update, reply: write(404),
            expected: .deletedOnServer(status: 404)),
        .init(
            name: "insert 404 is refused", attempt: insert, reply: write(404, nil, "no such table"),
            expected: .failed(status: 404, message: "no such table")),
        // Conflicts.
        .init(
            name: "update 412 with another version is a conflict", attempt: update, reply: write(412, theirs),
            expected: .conflict(serverItem: theirs, status: 412)),
        .init(
            name: "insert 409 with exactly what was sent was already applied", attempt: insert,
            reply: write(409, stored), expected: .alreadyApplied(serverItem: stored)),
        .init(
            name: "a boolean sent matches a number stored", attempt: insert,
            reply: write(409, ["id": "a", "text": "mine", "complete": 0, "version": "v2"]),
            expected: .alreadyApplied(serverItem: ["id": "a", "text": "mine", "complete": 0, "version": "v2"])),
        .init(
            name: "insert 409 without the item asks for it", attempt: insert, reply: write(409, nil, "exists"),
            expected: .fetchServerItem),
        .init(
            name: "update 412 with a soft-deleted copy is deleted on the server", attempt: update,
            reply: write(412, softDeleted), expected: .deletedOnServer(status: 412)),
        .init(
            name: "re-creating insert 409 with a soft-deleted copy undeletes", attempt: recreate,
            reply: write(409, softDeleted), expected: .recreate),
        .init(
            name: "delete 412 with a soft-deleted copy is done", attempt: delete, reply: write(412, softDeleted),
            expected: .done(serverItem: nil)),
        .init(
            name: "409 holding an earlier body of ours resends over its version", attempt: editedAfterLostAnswer,
            reply: write(409, stored), expected: .resend(over: stored)),
        .init(
            name: "delete 412 holding the deleted values at a newer version resends over it", attempt: delete,
            reply: write(412, stored), expected: .resend(over: stored)),
        .init(
            name: "delete 412 with other values is a conflict", attempt: delete, reply: write(412, theirs),
            expected: .conflict(serverItem: theirs, status: 412)),
        // Stops and retries.
        .init(
            name: "401 stops: not authorised", attempt: insert, reply: write(401, nil, "key"),
            expected: .stop(.stopped(.notAuthorized(status: 401, message: "key")))),
        .init(
            name: "403 stops: not authorised", attempt: update, reply: write(403, nil, "no"),
            expected: .stop(.stopped(.notAuthorized(status: 403, message: "no")))),
        .init(
            name: "408 is retried later", attempt: insert, reply: write(408),
            expected: .retryLater(.timedOut, status: 408)),
        .init(
            name: "429 is retried later", attempt: insert, reply: write(429, nil, "slow down"),
            expected: .retryLater(.serverError(status: 429, message: "slow down"), status: 429)),
        .init(
            name: "503 is retried later", attempt: delete, reply: write(503, nil, "down"),
            expected: .retryLater(.serverError(status: 503, message: "down"), status: 503)),
        // Refusals.
        .init(
            name: "400 is refused with the service's message", attempt: insert, reply: write(400, nil, "text too long"),
            expected: .failed(status: 400, message: "text too long")),
        .init(
            name: "422 is refused", attempt: update, reply: write(422, nil, "bad"),
            expected: .failed(status: 422, message: "bad")),
        // The GET of the item after an answer without it.
        .init(
            name: "after 409, a GET with what was sent was already applied", attempt: insert,
            reply: fetch(after: 409, 200, stored), expected: .alreadyApplied(serverItem: stored)),
        .init(
            name: "after 409, a GET with other values is a conflict", attempt: insert,
            reply: fetch(after: 409, 200, theirs), expected: .conflict(serverItem: theirs, status: 409)),
        .init(
            name: "after 412, a GET about another item stops", attempt: update, reply: fetch(after: 412, 200, victim),
            expected: anotherItem(200)),
        .init(
            name: "after 409, a GET answered 404 is deleted on the server", attempt: insert,
            reply: fetch(after: 409, 404), expected: .deletedOnServer(status: 409)),
        .init(
            name: "after a delete's 412, a GET answered 404 is done", attempt: delete, reply: fetch(after: 412, 404),
            expected: .done(serverItem: nil)),
        .init(
            name: "after a re-creating insert's 409, a GET answered 410 undeletes", attempt: recreate,
            reply: fetch(after: 409, 410), expected: .recreate),
        .init(
            name: "after 201, a GET with the item is done", attempt: insert, reply: fetch(after: 201, 200, stored),
            expected: .done(serverItem: stored)),
        .init(
            name: "after 201, a GET answered 404 is retried, not called deleted", attempt: insert,
            reply: fetch(after: 201, 404),
            expected: .retryLater(
                .serverError(status: 201, message: "its answer to insert was not the stored item"), status: 201)),
        .init(
            name: "a GET whose body is not an item is retried", attempt: update, reply: fetch(after: 412, 200),
            expected: .retryLater(
                .serverError(status: 200, message: "its answer to GET was not the stored item"), status: 200)),
        .init(
            name: "a GET answered 401 stops", attempt: update, reply: fetch(after: 412, 401, nil, "key"),
            expected: .stop(.stopped(.notAuthorized(status: 401, message: "key")))),
        .init(
            name: "a GET answered 500 is retried", attempt: update, reply: fetch(after: 412, 500, nil, "boom"),
            expected: .retryLater(.serverError(status: 500, message: "boom"), status: 500)),
        // The undelete of Use Client over a delete.
        .init(
            name: "an undelete answered 200 with the item sends the values as an update of it", attempt: recreate,
            reply: undelete(200, stored), expected: .updateUndeleted(stored)),
        .init(
            name: "an undelete answered 200 without the item is refused", attempt: recreate,
            reply: undelete(200, nil), expected: .failed(status: 200, message: "")),
        .init(
            name: "an undelete answered 404 is refused with the service's message", attempt: recreate,
            reply: undelete(404, nil, "no such item"), expected: .failed(status: 404, message: "no such item")),
        .init(
            name: "an undelete answered about another item stops", attempt: recreate, reply: undelete(200, victim),
            expected: anotherItem(200)),
    ]

/// The push state machine, row by row, without a network or a store.
struct PushDecisionTests {
    @Test(arguments: pushDecisionTable)
    func answerMeansWhatTheTableSays(_ row: PushDecisionCase) {
        #expect(PushDecision.decide(row.attempt, row.reply) == row.expected)
    }

    @Test func everyDecisionKindHasARow() {
        var kinds = Set<String>()
        for row in pushDecisionTable {
            let kind =
                switch row.expected {
                case .done: "done"
                case .alreadyApplied: "alreadyApplied"
                case .conflict: "conflict"
                case .deletedOnServer: "deletedOnServer"
                case .failed: "failed"
                case .stop: "stop"
                case .retryLater: "retryLater"
                case .fetchServerItem: "fetchServerItem"
                case .resend: "resend"
                case .recreate: "recreate"
                case .updateUndeleted: "updateUndeleted"
                }
            kinds.insert(kind)
        }
        #expect(kinds.count == 11)
    }
}
