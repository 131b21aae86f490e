import FaultProxy
import Foundation
import HTTPServer
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Two devices on one service: `phone` is the client under test, the server copy is changed directly.
@Suite(.timeLimit(.minutes(10)))
struct ConflictTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// A client holding item `a` ("original", version from the server), plus a server change to "server".
    func conflictedUpdate(remote: URL? = nil, policy: ConflictPolicy = .ask) async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: remote ?? service.endpoint, policy: policy)
        try await service.rest.insert(["id": "a", "text": "original", "complete": false])
        _ = try await context.table("todoitem").pull()
        try await service.rest.patch("a", ["text": "server"])
        try await context.table("todoitem").update(["id": "a", "text": "client", "complete": true])
        return context
    }

    /// A local edit of `a` pushed after the server deleted `a`: operation 1 is in conflict.
    func updateOfAnItemDeletedOnTheServer() async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "original"])
        _ = try await context.table("todoitem").pull()
        try await service.rest.delete("a")
        try await context.table("todoitem").update(["id": "a", "text": "client"])
        _ = try await context.push()
        return context
    }

    @Test func updateAnswered412IsAConflictWithTheServersItem() async throws {
        let context = try await conflictedUpdate()
        let result = try await context.push()
        #expect(result.conflicts == [1])
        let conflict = try #require(try context.conflicts.all().first)
        #expect(conflict.operation.state == .conflict)
        #expect(conflict.error.status == 412)
        #expect(conflict.serverItem?.text == "server")
        #expect(conflict.clientItem?.text == "client")
        #expect(conflict.base?.text == "original")
        let fields = Dictionary(
            uniqueKeysWithValues: conflict.fields(columns: ["text", "complete"]).map { ($0.name, $0) })
        #expect(fields["text"]?.differs == true)
        #expect(fields["complete"]?.client == .bool(true) && fields["complete"]?.server == .bool(false))
        #expect(try context.status().conflicts == 1)
    }

    @Test func deleteAnswered412IsAConflict() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "original"])
        _ = try await context.table("todoitem").pull()
        try await service.rest.patch("a", ["text": "server"])
        try await context.table("todoitem").delete(id: "a")
        let result = try await context.push()
        #expect(result.conflicts == [1])
        let conflict = try #require(try context.conflicts.conflict(1))
        #expect(conflict.operation.kind == .delete)
        #expect(conflict.serverItem?.text == "server")
        #expect(conflict.clientItem == nil)
    }

    @Test func insertOfAnExistingIdIsAConflictWithTheServersItem() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "theirs"])
        try await context.table("todoitem").insert(["id": "a", "text": "mine"])
        let result = try await context.push()
        #expect(result.conflicts == [1])
        let conflict = try #require(try context.conflicts.conflict(1))
        #expect(conflict.error.status == 409)
        #expect(conflict.serverItem?.text == "theirs")
    }

    @Test func officialServersEchoed409IsAnsweredByFetchingTheItem() async throws {
        // The official Node server answers a duplicate insert with the client's own item, no version.
        let proxy = try await service.proxy()
        proxy.intercept { request, upstream in
            let response = try await upstream.forward(request)
            guard request.method == "POST", response.status == 409 else { return .answer(response) }
            return .answer(.json(409, bytes: request.body))
        }
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        try await service.rest.insert(["id": "a", "text": "theirs"])
        try await context.table("todoitem").insert(["id": "a", "text": "mine"])
        let result = try await context.push()
        #expect(result.conflicts == [1])
        #expect(proxy.requests.last == "GET /tables/todoitem/a")
        #expect(try context.conflicts.conflict(1)?.serverItem?.text == "theirs")
    }

    @Test func updateOfAnItemDeletedOnTheServerIsAConflict() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "original"])
        _ = try await context.table("todoitem").pull()
        try await service.rest.delete("a")
        try await context.table("todoitem").update(["id": "a", "text": "client"])
        let result = try await context.push()
        #expect(result.conflicts == [1])
        let conflict = try #require(try context.conflicts.conflict(1))
        #expect(conflict.deletedOnServer)
        #expect(conflict.serverItem == nil)
        #expect(conflict.error.status == 404)
    }

    @Test func useClientPushesTheLocalValuesOverTheServersVersion() async throws {
        let context = try await conflictedUpdate()
        _ = try await context.push()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        #expect(try context.operations.all().isEmpty)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "client")
        #expect(server["complete"] == .bool(true))
        #expect(try context.table("todoitem").item(id: "a")?.version == server.version)
    }

    @Test func useClientMeetingASecondServerChangeIsANewConflict() async throws {
        let armed = Trigger()
        let service = self.service
        let proxy = try await service.proxy()
        proxy.intercept { request, _ in
            if request.method == "PATCH", armed.take() {
                // Another device saves again just before our Use Client arrives.
                try await service.rest.patch("a", ["text": "server again"])
            }
            return nil
        }
        let context = try await conflictedUpdate(remote: proxy.endpoint)
        _ = try await context.push()
        armed.arm()
        #expect(try await context.conflicts.useClient(1) == .conflict)
        let conflict = try #require(try context.conflicts.conflict(1))
        #expect(conflict.serverItem?.text == "server again")
        #expect(conflict.base?.text == "server")
        #expect(conflict.clientItem?.text == "client")
        #expect(try await context.conflicts.useClient(1) == .pushed)
        #expect(try await service.rest.get("todoitem", "a")?.text == "client")
    }

    @Test func useServerTakesTheServersVersionAndDropsTheOperation() async throws {
        let context = try await conflictedUpdate()
        _ = try await context.push()
        try await context.conflicts.useServer(1)
        #expect(try context.operations.all().isEmpty)
        let row = try #require(try context.table("todoitem").item(id: "a"))
        #expect(row.text == "server")
        #expect(row.version == (try await service.rest.get("todoitem", "a"))?.version)
    }

    @Test func useServerForAnItemDeletedOnTheServerRemovesTheLocalRow() async throws {
        let context = try await updateOfAnItemDeletedOnTheServer()
        try await context.conflicts.resolve(1, with: .useServer)
        #expect(try context.table("todoitem").item(id: "a") == nil)
        #expect(try context.operations.all().isEmpty)
    }

    @Test func useClientForAnItemDeletedOnTheServerRecreatesIt() async throws {
        let context = try await updateOfAnItemDeletedOnTheServer()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        let server = try #require(try await service.rest.get("todoitem", "a"))
        #expect(server.text == "client")
        #expect(try context.operations.all().isEmpty)
    }

    @Test func useClientForADuplicateInsertBecomesAnUpdate() async throws {
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        try await service.rest.insert(["id": "a", "text": "theirs"])
        try await context.table("todoitem").insert(["id": "a", "text": "mine"])
        _ = try await context.push()
        #expect(try await context.conflicts.useClient(1) == .pushed)
        #expect(try await service.rest.get("todoitem", "a")?.text == "mine")
    }

    @Test func cancelLeavesTheOperationPendingUntilTheNextPush() async throws {
        let context = try await conflictedUpdate()
        _ = try await context.push()
        try await context.queue.cancel(1)
        #expect(try queueShape(context) == ["update a pending"])
        #expect(try context.conflicts.all().isEmpty)
        #expect(try context.table("todoitem").item(id: "a")?.text == "client")
        let again = try await context.push()
        #expect(again.conflicts == [1])
    }

    @Test func serverWinsPolicyResolvesDuringPush() async throws {
        let context = try await conflictedUpdate(policy: .serverWins)
        let result = try await context.push()
        #expect(result.resolved == [1])
        #expect(try context.table("todoitem").item(id: "a")?.text == "server")
        #expect(try context.operations.all().isEmpty)
    }

    @Test func clientWinsPolicyResolvesDuringPush() async throws {
        let context = try await conflictedUpdate(policy: .clientWins)
        let result = try await context.push()
        #expect(result.pushed == [1])
        #expect(try await service.rest.get("todoitem", "a")?.text == "client")
    }

    @Test func pendingRowsAreNotOverwrittenByPull() async throws {
        let context = try await conflictedUpdate()
        _ = try await context.push()
        let pulled = try await context.table("todoitem").pull()
        #expect(pulled.skippedPending == 1)
        #expect(try context.table("todoitem").item(id: "a")?.text == "client")
    }
}
