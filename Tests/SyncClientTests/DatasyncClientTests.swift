import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// The sync client speaking Datasync v3 to `todosync serve`: push with POST, PUT and DELETE under
/// `If-Match`, pull in `(updatedAt, id)` pages, conflicts as in v2, and `auto` finding out which
/// protocol a service speaks.
@Suite(.timeLimit(.minutes(10)))
struct DatasyncClientTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    func context(
        _ name: String = "store.sqlite", remote: URL? = nil, policy: ConflictPolicy = .ask,
        tableProtocol: ProtocolChoice = .v3
    ) throws -> SyncContext {
        try SyncContext(
            path: folder.file(name),
            configuration: SyncConfiguration(
                remoteURL: remote ?? service.endpoint, conflictPolicy: policy, tableProtocol: tableProtocol))
    }

    @Test func pushSendsPostPutAndDeleteWithIfMatch() async throws {
        let proxy = try await service.proxy()
        let context = try context(remote: proxy.endpoint)
        try await context.table("todoitem").insert(["id": "a", "text": "milk", "complete": false])
        try await context.table("todoitem").insert(["id": "b", "text": "bread", "complete": false])
        #expect(try await context.push().pushed == [1, 2])
        try await context.table("todoitem").update(["id": "a", "complete": true])
        try await context.table("todoitem").delete(id: "b")
        #expect(try await context.push().pushed.count == 2)

        #expect(Set(proxy.requests.suffix(2)) == ["PUT /tables/todoitem/a", "DELETE /tables/todoitem/b"])
        let a = try #require(try await service.rest.get("todoitem", "a"))
        #expect(a["text"] == "milk" && a["complete"] == true, "a PUT carries the whole row")
        #expect(try context.table("todoitem").item(id: "a")?.version == a.version)
        #expect(try await service.rest.get("todoitem", "b") == nil)
        #expect(try context.exchanges().exchanges.allSatisfy { $0.requestHeaders.contains("ZUMO-API-VERSION: 3.0.0") })
    }

    @Test func a412IsAConflictSettledEitherWay() async throws {
        let context = try context()
        for id in ["a", "b"] { try await service.rest.insert(["id": .string(id), "text": "base"]) }
        _ = try await context.table("todoitem").pull(queryId: "all")
        for id in ["a", "b"] {
            _ = try await service.rest.patch(id, ["text": "server"])
            try await context.table("todoitem").update(["id": .string(id), "text": "client"])
        }
        let result = try await context.push()
        #expect(result.conflicts == [1, 2])
        #expect(try context.operations.operation(1)?.lastStatus == 412)
        #expect(try await context.conflicts.useClient(1) == .pushed)
        try await context.conflicts.useServer(2)
        #expect(try await service.rest.get("todoitem", "a")?.text == "client")
        #expect(try context.table("todoitem").item(id: "b")?.text == "server")
        #expect(try context.journal.entries().entries.map(\.decision) == [.useServer, .useClient], "newest first")
    }

    @Test func aMergeByPolicyPutsTheMergedRow() async throws {
        let context = try context(policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull(queryId: "all")
        _ = try await service.rest.patch("a", ["complete": true])
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        #expect(try await context.push().pushed == [1])
        let merged = try #require(try await service.rest.get("todoitem", "a"))
        #expect(merged.text == "oat milk" && merged["complete"] == true)
    }

    @Test func aPullMissesNoRowSharingAMillisecondAcrossPagesEvenWhenInterrupted() async throws {
        try await service.rest.seed(2_000)
        // 200 rows in one millisecond, in the middle of the others, across several pages of 50.
        try withServiceDatabase(service) { db in
            let middle = try Int64.fetchOne(
                db, sql: "SELECT updatedAt FROM todoitem WHERE id = 'row-001000'")!
            try db.execute(
                sql: "UPDATE todoitem SET updatedAt = ? WHERE id BETWEEN 'row-000900' AND 'row-001099'",
                arguments: [middle])
        }
        let context = try context()
        let todo = context.table("todoitem")
        let updates = context.progressUpdates()
        let interrupted = Task {
            for await progress in updates where progress.activity == .pulling && progress.done >= 950 { break }
            context.jobs.cancel()
        }
        await #expect(throws: SyncError.stopped(.cancelled)) {
            try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 50))
        }
        await interrupted.value
        let partial = try todo.count()
        #expect(partial < 2_000)
        _ = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 50))
        #expect(try todo.count() == 2_000)
        let ids = try Set(todo.query().compactMap { $0["id"]?.stringValue })
        #expect(ids.count == 2_000 && ids.contains("row-000900") && ids.contains("row-001099"))
        #expect(try context.exchanges(ExchangeQuery(limit: 1)).exchanges.first?.target.contains("%24count") == false)
    }

    @Test func aRowDeletedOnTheServiceLeavesTheLocalTable() async throws {
        let context = try context()
        try await service.rest.insert(["id": "a", "text": "x"])
        try await service.rest.insert(["id": "b", "text": "y"])
        _ = try await context.table("todoitem").pull(queryId: "all")
        try await service.rest.delete("a")
        let pulled = try await context.table("todoitem").pull(queryId: "all")
        #expect(pulled.deleted == 1)
        #expect(try context.table("todoitem").item(id: "a") == nil)
        // An update of a row deleted there meets a 410: deleted on the server.
        try await context.table("todoitem").update(["id": "b", "text": "z"])
        try await service.rest.delete("b")
        #expect(try await context.push().conflicts == [1])
        #expect(try context.conflicts.all().first?.deletedOnServer == true)
    }

    @Test func v2AndV3ClientsOnTheSameTableConverge() async throws {
        let v2 = try context("v2.sqlite", tableProtocol: .v2)
        let v3 = try context("v3.sqlite", tableProtocol: .v3)
        try await v2.table("todoitem").insert(["id": "from-v2", "text": "two"])
        try await v3.table("todoitem").insert(["id": "from-v3", "text": "three"])
        _ = try await v2.push()
        _ = try await v3.push()
        for context in [v2, v3] { _ = try await context.table("todoitem").pull(queryId: "all") }
        try await v3.table("todoitem").update(["id": "from-v2", "text": "two, edited in v3"])
        _ = try await v3.push()
        _ = try await v2.table("todoitem").pull(queryId: "all")
        let rows = { (context: SyncContext) in
            try context.table("todoitem").query().map { "\($0["id"]!.stringValue!)=\($0.text!)@\($0.version!)" }
                .sorted()
        }
        #expect(try rows(v2) == rows(v3))
        #expect(try rows(v2).contains { $0.hasPrefix("from-v2=two, edited in v3@") })
        #expect(try await v3.verify("todoitem").differences.isEmpty)
    }

    @Test func autoAsksTheServiceOnceAndKeepsTheAnswer() async throws {
        // todosync serve answers 2.0.0 as v2: auto keeps v2 there.
        let onServe = try context("serve.sqlite", tableProtocol: .auto)
        #expect(onServe.tableProtocol == nil)
        _ = try await onServe.table("todoitem").pull()
        #expect(onServe.tableProtocol == .v2)

        // A Datasync service ignores the version header and answers v3 pages.
        let datasync = try await MisbehavingService { request in
            request.method == "GET" ? .json(200, #"{"items":[],"count":0,"nextLink":null}"#) : .json(404, "{}")
        }
        let context = try context("datasync.sqlite", remote: datasync.url, tableProtocol: .auto)
        _ = try await context.table("todoitem").pull(queryId: "all")
        #expect(context.tableProtocol == .v3)
        let asked = datasync.requests.count
        #expect(datasync.requests.last?.query["__includedeleted"] == "true", "the pull spoke v3")
        try await context.close()

        let reopened = try self.context("datasync.sqlite", remote: datasync.url, tableProtocol: .auto)
        #expect(reopened.tableProtocol == .v3, "kept in the store")
        _ = try await reopened.table("todoitem").pull(queryId: "all")
        #expect(datasync.requests.count == asked + 1, "no second question")
        await datasync.stop()
    }

    @Test func aPushAsksWithTheTableOfItsFirstChangeNotATableTheServiceLacks() async throws {
        // A Datasync service of an app with an `orders` table and no `todoitem`.
        let datasync = try await MisbehavingService { request in
            switch (request.method, request.path) {
            case ("GET", "/tables/orders"): .json(200, #"{"items":[],"count":0,"nextLink":null}"#)
            case ("POST", "/tables/orders"):
                .json(
                    201,
                    #"{"id":"o1","customer":"ACME","version":"AAAAAAAAB9E=","updatedAt":"2026-11-26T10:00:00.000Z","deleted":false}"#
                )
            default: .json(404, #"{"error":"no such table"}"#)
            }
        }
        let context = try SyncContext(
            path: folder.file("orders.sqlite"), tables: [.todoItem, TableDescription(name: "orders", columns: [])],
            configuration: SyncConfiguration(remoteURL: datasync.url, tableProtocol: .auto))
        try await context.table("orders").insert(["id": "o1", "customer": "ACME"])
        let result = try await context.push()
        #expect(result.pushed.count == 1)
        #expect(context.tableProtocol == .v3)
        #expect(datasync.requests.map { "\($0.method) \($0.path)" } == ["GET /tables/orders", "POST /tables/orders"])
        #expect(datasync.requests.last?.headers["zumo-api-version"] == "3.0.0", "the push spoke v3")
        await datasync.stop()
    }

    @Test func choosingAnotherProtocolReadsEveryRowAgain() async throws {
        try await service.rest.seed(5)
        let first = try context(tableProtocol: .v2)
        _ = try await first.table("todoitem").pull(queryId: "all")
        try await first.close()
        let again = try context(tableProtocol: .v3)
        #expect(try await again.table("todoitem").pull(queryId: "all").received == 5)
        #expect(try await again.table("todoitem").pull(queryId: "all").received == 0)
    }

    @Test func aV3AnswerAboutAnotherItemStopsThePush() async throws {
        let liar = try await MisbehavingService { request in
            request.method == "POST"
                ? .json(
                    201, #"{"id":"victim","version":"AAE=","updatedAt":"2026-01-01T00:00:00.000Z","deleted":false}"#)
                : .json(404, "{}")
        }
        let context = try context(remote: liar.url)
        try await context.table("todoitem").insert(["id": "mine", "text": "x"])
        await #expect(
            throws: SyncError.serviceFault(.answerAboutAnotherItem(status: .created, sent: "mine", received: "victim"))
        ) {
            try await context.push()
        }
        #expect(try queueShape(context) == ["insert mine attempted"])
        await liar.stop()
    }
}
