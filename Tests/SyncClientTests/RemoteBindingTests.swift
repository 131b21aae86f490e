import FaultProxy
import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// A store is bound to its remote: two real table services on loopback, A with 500 rows and B with
/// 300 rows older than all of A's (so that A's delta token would skip every one of them).
@Suite(.timeLimit(.minutes(10)))
struct RemoteBindingTests {
    let folder: TemporaryFolder
    let a: TestService
    let b: TestService

    init() async throws {
        folder = try TemporaryFolder()
        let folderA = try TemporaryFolder()
        let folderB = try TemporaryFolder()
        b = try await TestService.forSync(in: folderB)
        a = try await TestService.forSync(in: folderA)
        try await b.rest.seed(300, prefix: "b")
        try await a.rest.seed(500, prefix: "a")
    }

    /// A store that has pulled A's 500 rows incrementally (so it holds A's delta token).
    func storeSyncedWithA(policy: ConflictPolicy = .ask) async throws -> SyncContext {
        let context = try SyncContext.temporary(in: folder, remote: a.endpoint, policy: policy)
        try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(try context.table("todoitem").count() == 500)
        return context
    }

    func localIds(_ context: SyncContext) throws -> [String] {
        try context.table("todoitem").query().compactMap { $0["id"]?.stringValue }.sorted()
    }

    func serviceIds(_ service: TestService) async throws -> [String] {
        try await service.rest.all().filter { $0["deleted"] != .bool(true) }.compactMap { $0["id"]?.stringValue }
            .sorted()
    }

    @Test func afterSwitchingToAnotherServiceAndSyncingTheStoreHoldsExactlyItsRows() async throws {
        let context = try await storeSyncedWithA()
        let report = try #require(try await context.setRemote(url: b.endpoint, applicationKey: nil).switchReport)
        #expect(report.removedRows == 500)
        #expect(report.from == ServiceIdentity(url: a.endpoint) && report.to == ServiceIdentity(url: b.endpoint))
        #expect(try context.table("todoitem").count() == 0)
        #expect(context.lastSync == nil)
        #expect(try context.boundService() == ServiceIdentity(url: b.endpoint))

        let pulled = try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(pulled.received == 300)
        #expect(try localIds(context) == (try await serviceIds(b)))
        #expect(try localIds(context).count == 300)
    }

    @Test func aSwitchAlsoRemovesTheOldServicesRowsOfTablesNotOpenedNow() async throws {
        let tags = TableDescription(name: "tag", columns: [.init("label", .text)])
        try await a.rest.insert(["id": "t1", "label": "from A"], table: "tag")
        let withTags = try SyncContext.temporary(in: folder, remote: a.endpoint, tables: [tags])
        try await withTags.table("tag").pull(queryId: "all")
        #expect(try withTags.table("tag").count() == 1)
        try await withTags.close()

        let context = try await storeSyncedWithA()
        let report = try #require(try await context.setRemote(url: b.endpoint, applicationKey: nil).switchReport)
        #expect(report.removedRows == 501)
        try await context.close()
        let reopened = try SyncContext.temporary(in: folder, remote: b.endpoint, tables: [tags])
        #expect(try reopened.table("tag").count() == 0)
    }

    @Test func theSameServiceWrittenAnotherWayKeepsRowsAndToken() async throws {
        let context = try await storeSyncedWithA()
        var components = URLComponents(url: a.endpoint, resolvingAgainstBaseURL: false)!
        components.host = "127.0.0.1"
        components.path = "/"
        components.scheme = "HTTP"
        let change = try await context.setRemote(url: components.url!, applicationKey: nil)
        #expect(change == .unchanged)
        #expect(try context.table("todoitem").count() == 500)
        try await a.rest.insert(["id": "late", "text": "new on A"])
        let pulled = try await context.table("todoitem").pull(queryId: "all")
        #expect(pulled.received == 1)
    }

    /// A store synced with A holding an insert, an update, a delete and a conflict, none taken by A.
    func storeWithChangesForA() async throws -> SyncContext {
        let context = try await storeSyncedWithA()
        let todo = context.table("todoitem")
        try await todo.update(["id": "a-000003", "text": "mine, against A's"])
        try await a.rest.patch("a-000003", ["text": "A changed it"])
        let pushed = try await context.push()
        #expect(pushed.conflicts.count == 1)
        try await todo.insert(["id": "mine", "text": "made here"])
        try await todo.update(["id": "a-000001", "text": "edited here"])
        try await todo.delete(id: "a-000002")
        return context
    }

    @Test func aSwitchWithQueuedChangesIsRefusedAndSaysHowMany() async throws {
        let context = try await storeWithChangesForA()
        let error = await #expect(throws: SyncError.self) {
            try await context.setRemote(url: b.endpoint, applicationKey: nil)
        }
        guard case .remoteSwitchRefused(let refusal)? = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(refusal.pending == 3 && refusal.conflicts == 1 && refusal.failed == 0)
        let message = error!.description
        #expect(message.contains("3 changes not yet pushed and 1 conflict"))
        #expect(message.contains("push them to the new service or to discard them"))
        #expect(!message.contains("Optional"))
        // Nothing moved: still A's store, address, rows, queue and token.
        #expect(context.remoteURL == a.endpoint.absoluteString)
        #expect(try context.boundService() == ServiceIdentity(url: a.endpoint))
        #expect(try context.table("todoitem").count() == 500)
        #expect(try context.operations.all().count == 4)
        try await a.rest.insert(["id": "late", "text": "new on A"])
        try await context.table("todoitem").pull(queryId: "all")
        #expect(try context.table("todoitem").item(id: "late") != nil)
        #expect(try await a.rest.get("todoitem", "mine")?.text == "made here")
    }

    @Test func discardingQueuedChangesSwitchesToExactlyTheNewServicesRows() async throws {
        let context = try await storeWithChangesForA()
        let report = try #require(
            try await context.setRemote(url: b.endpoint, applicationKey: nil, onSwitch: .discard).switchReport)
        #expect(report.discardedOperations == 4 && report.carriedOperations == 0)
        #expect(try context.operations.all().isEmpty)
        #expect(try context.table("todoitem").count() == 0)
        try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(try localIds(context) == (try await serviceIds(b)))
        #expect(try await b.rest.get("todoitem", "mine") == nil)
        #expect(try await a.rest.get("todoitem", "mine") == nil)
    }

    @Test func pushingQueuedChangesSendsThemToTheNewService() async throws {
        let context = try await storeWithChangesForA()
        let report = try #require(
            try await context.setRemote(url: b.endpoint, applicationKey: nil, onSwitch: .push).switchReport)
        #expect(report.carriedOperations == 4 && report.discardedOperations == 0)
        // The rows of A without a change are gone; those with one stay until pushed.
        #expect(try localIds(context) == ["a-000001", "a-000003", "mine"])
        #expect(
            try queueShape(context) == [
                "insert a-000003 pending", "insert mine pending", "insert a-000001 pending", "delete a-000002 pending",
            ])

        let pushed = try await context.push()
        #expect(pushed.pushed.count == 4 && pushed.conflicts.isEmpty && pushed.failed.isEmpty)
        // B never had A's items: the updates arrive as new items with the values edited here, the
        // delete of an item B never had is settled by its 404.
        #expect(try await b.rest.get("todoitem", "a-000001")?.text == "edited here")
        #expect(try await b.rest.get("todoitem", "a-000003")?.text == "mine, against A's")
        #expect(try await b.rest.get("todoitem", "mine")?.text == "made here")
        #expect(try await b.rest.get("todoitem", "a-000002") == nil)
        // A was not touched.
        #expect(try await a.rest.get("todoitem", "mine") == nil)
        #expect(try await a.rest.get("todoitem", "a-000001")?.text == "text 1")

        try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(try context.operations.all().isEmpty)
        #expect(try localIds(context) == (try await serviceIds(b)))
        #expect(try localIds(context).count == 303)
        #expect(
            try context.table("todoitem").item(id: "a-000001")?.version
                == (try await b.rest.get("todoitem", "a-000001"))?.version)
    }

    @Test func aCarriedUpdateOfAnItemTheNewServiceAlsoHasMeetsItAsAConflict() async throws {
        let context = try await storeSyncedWithA()
        try await context.table("todoitem").update(["id": "a-000001", "text": "edited here"])
        try await b.rest.insert(["id": "a-000001", "text": "B's own"])
        try await context.setRemote(url: b.endpoint, applicationKey: nil, onSwitch: .push)
        let pushed = try await context.push()
        #expect(pushed.conflicts.count == 1)
        let conflict = try #require(try context.conflicts.all().first)
        #expect(conflict.serverItem?.text == "B's own")
        #expect(conflict.clientItem?.text == "edited here")
        #expect(conflict.error.message.contains("already exists on the service"))
        // Use Client sends the values over B's version.
        _ = try await context.conflicts.useClient(conflict.operation.id)
        #expect(try await b.rest.get("todoitem", "a-000001")?.text == "edited here")
        #expect(try context.operations.all().isEmpty)
    }

    @Test func openingWithAnotherServiceIsRefusedWhileChangesAreQueuedUnlessTheChoiceIsGiven() async throws {
        let context = try await storeSyncedWithA()
        try await context.table("todoitem").insert(["id": "mine", "text": "made here"])
        try await context.close()
        let path = folder.file("store.sqlite")
        #expect(throws: SyncError.self) {
            try SyncContext(path: path, configuration: SyncConfiguration(remoteURL: b.endpoint))
        }
        let reopened = try SyncContext(path: path)
        #expect(reopened.remoteURL == a.endpoint.absoluteString)
        #expect(try reopened.table("todoitem").count() == 501)
        try await reopened.close()

        let moved = try SyncContext(
            path: path, configuration: SyncConfiguration(remoteURL: b.endpoint, onRemoteSwitch: .push))
        #expect(try moved.boundService() == ServiceIdentity(url: b.endpoint))
        _ = try await moved.push()
        try await moved.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(try localIds(moved) == (try await serviceIds(b)))
        #expect(try localIds(moved).count == 301)
    }

    @Test func anUnboundStoreBindsToItsFirstServiceWithoutRemovingAnything() async throws {
        let context = try SyncContext.temporary(in: folder, remote: nil)
        try await context.table("todoitem").insert(["id": "mine", "text": "made before any service"])
        #expect(try context.boundService() == nil)
        let change = try await context.setRemote(url: a.endpoint, applicationKey: nil)
        #expect(change == .bound(ServiceIdentity(url: a.endpoint)!))
        #expect(try context.table("todoitem").count() == 1)
        #expect(try context.operations.all().count == 1)
        // No address keeps the binding and the rows.
        #expect(try await context.setRemote(url: nil, applicationKey: nil) == .cleared)
        #expect(try context.boundService() == ServiceIdentity(url: a.endpoint))
        #expect(try context.table("todoitem").count() == 1)
    }

    @Test func aStoreWrittenBeforeBindingIsBoundWithoutRemovingAnything() async throws {
        let context = try await storeSyncedWithA()
        try await context.close()
        let path = folder.file("store.sqlite")
        /// Makes the store look like one of an earlier todosync: an address, no bound service.
        func forgetBinding() async throws {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: "DELETE FROM __config WHERE key = 'boundService'") }
            try queue.close()
        }
        // Opened without an address: bound to the one it saved.
        try await forgetBinding()
        let reopened = try SyncContext(path: path)
        #expect(try reopened.boundService() == ServiceIdentity(url: a.endpoint))
        #expect(try reopened.table("todoitem").count() == 500)
        try await reopened.close()
        // Opened with an address: bound to that one, still without removing anything.
        try await forgetBinding()
        let pointed = try SyncContext(path: path, configuration: SyncConfiguration(remoteURL: b.endpoint))
        #expect(try pointed.boundService() == ServiceIdentity(url: b.endpoint))
        #expect(try pointed.table("todoitem").count() == 500)
        // From then on it is bound: going back to A is a switch.
        try await pointed.setRemote(url: a.endpoint, applicationKey: nil)
        #expect(try pointed.table("todoitem").count() == 0)
    }

    @Test func switchingCancelsARunningPullSoNothingOfTheOldServiceLands() async throws {
        // A reached through a proxy that passes two pages, then holds the third one's answer until
        // the client gives up on it.
        let slowA = try await a.proxy()
        let thirdPage = slowA.holdAnswers(after: 2)
        let context = try SyncContext.temporary(in: folder, remote: slowA.endpoint)
        let pull = Task {
            try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 5))
        }
        await thirdPage.wait()
        try await context.setRemote(url: b.endpoint, applicationKey: nil)
        await #expect(throws: SyncError.stopped(.cancelled)) { try await pull.value }
        #expect(try context.table("todoitem").count() == 0)
        try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 200))
        #expect(try localIds(context) == (try await serviceIds(b)))
    }
}

extension RemoteChange {
    /// The report of a switch; nil for any other change.
    var switchReport: RemoteSwitchReport? {
        if case .switched(let report) = self { report } else { nil }
    }
}

/// The identity of a service: scheme, host, port and path, whatever way the address is written.
struct ServiceIdentityTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/", true),
        ("http://Example.ORG/app/", "HTTP://example.org:80/app", true),
        ("https://example.org", "https://example.org:443/", true),
        ("http://example.org/app?x=1#top", "http://example.org/app", true),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8081", false),
        ("http://example.org/app", "http://example.org/other", false),
        ("http://example.org", "https://example.org", false),
        ("http://localhost:8080", "http://127.0.0.1:8080", false),
    ])
    func addressesNameTheSameServiceOnlyWhenSchemeHostPortAndPathAgree(first: String, second: String, same: Bool) {
        let one = ServiceIdentity(url: URL(string: first)!)
        let other = ServiceIdentity(url: URL(string: second)!)
        #expect(one != nil && other != nil)
        #expect((one == other) == same)
    }

    @Test func anAddressThatIsNotAWebAddressHasNoIdentity() {
        #expect(ServiceIdentity(url: URL(string: "file:///tmp/x")!) == nil)
        #expect(ServiceIdentity(url: URL(string: "mailto:someone@example.org")!) == nil)
    }

    @Test func aNamedServiceReadsAsItsName() {
        #expect(ServiceIdentity(name: "the embedded service").description == "the embedded service")
        #expect(ServiceIdentity(url: URL(string: "http://Example.org/")!)?.description == "http://example.org:80")
    }
}

/// `todosync client --remote` on a store bound to another service, as a script runs it.
@Suite(.timeLimit(.minutes(10)))
struct ClientRemoteSwitchTests {
    /// Runs `todosync client --store store …`.
    func client(_ store: String, _ arguments: [String]) async throws -> TodosyncCommand.Run {
        try await TodosyncCommand.run(["client", "--store", store] + arguments)
    }

    @Test func anotherRemoteWithQueuedChangesIsRefusedNamingTheFlagThenEachChoiceWorks() async throws {
        let folder = try TemporaryFolder()
        let a = try await TestService.forSync(in: try TemporaryFolder())
        let b = try await TestService.forSync(in: try TemporaryFolder())
        try await b.rest.seed(30, prefix: "b")
        try await a.rest.seed(50, prefix: "a")
        let store = folder.file("store.sqlite")
        let other = folder.file("other.sqlite")
        for path in [store, other] {
            let pulled = try await client(path, ["--remote", a.endpoint.absoluteString, "pull", "--query-id", "all"])
            #expect(pulled.status == 0, "\(pulled.errors)")
            let added = try await client(path, ["add", "made here"])
            #expect(added.status == 0, "\(added.errors)")
        }

        let refused = try await client(store, ["--remote", b.endpoint.absoluteString, "pull", "--query-id", "all"])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("still holds 1 change not yet pushed"))
        #expect(refused.errors.contains("--on-switch push"))
        #expect(refused.errors.contains("--on-switch discard"))
        #expect(!refused.errors.contains("Optional"))
        let unchanged = try await client(store, ["status"])
        #expect(unchanged.output.contains("remote: \(a.endpoint.absoluteString)"))

        let pushed = try await client(
            store, ["--remote", b.endpoint.absoluteString, "--on-switch", "push", "pull", "--query-id", "all"])
        #expect(pushed.status == 0, "\(pushed.errors)")
        #expect(pushed.errors.contains("Now syncing with"))
        #expect(pushed.errors.contains("50 rows of the old service removed"))
        #expect(pushed.errors.contains("1 change will be pushed to the new service"))
        let afterPush = try SyncContext(path: store)
        #expect(try afterPush.table("todoitem").count() == 31)
        #expect(try afterPush.operations.all().isEmpty)
        #expect(try await b.rest.all().count == 31)
        try await afterPush.close()

        let discarded = try await client(
            other, ["--remote", b.endpoint.absoluteString, "--on-switch", "discard", "pull", "--query-id", "all"])
        #expect(discarded.status == 0, "\(discarded.errors)")
        let afterDiscard = try SyncContext(path: other)
        #expect(try afterDiscard.table("todoitem").count() == 31)  // B's 30 and the one pushed from `store`
        #expect(try afterDiscard.operations.all().isEmpty)
        try await afterDiscard.close()
        #expect(try await a.rest.all().count == 50)
    }
}
