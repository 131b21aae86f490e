import Foundation
import SyncProtocol
import Synchronization
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// The client sends the signed-in user's token as `X-ZUMO-AUTH` or `Authorization: Bearer`; a
/// refused token stops the sync with a message that says so, and keeps the queue.
@Suite struct SignInTests {
    static let signIn = SignIn(secret: "a-test-secret-of-32-characters!!", perUserTables: ["todoitem"])

    @Test func twoSignedInDevicesSyncOnlyTheirOwnRows() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let alice = try SyncContext(
            path: folder.file("alice.sqlite"),
            configuration: .init(
                remoteURL: service.endpoint, authToken: try await TokenIssuer.token(for: "alice", signIn: Self.signIn)))
        let bob = try SyncContext(
            path: folder.file("bob.sqlite"),
            configuration: .init(
                remoteURL: service.endpoint, authToken: try await TokenIssuer.token(for: "bob", signIn: Self.signIn)))
        try await alice.table("todoitem").insert(["id": "a", "text": "alice's"])
        try await bob.table("todoitem").insert(["id": "b", "text": "bob's"])
        #expect(try await alice.push().pushed.count == 1)
        #expect(try await bob.push().pushed.count == 1)
        try await alice.table("todoitem").pull(queryId: "all")
        try await bob.table("todoitem").pull(queryId: "all")
        #expect(try alice.table("todoitem").query(.all).compactMap { $0["id"]?.stringValue } == ["a"])
        #expect(try bob.table("todoitem").query(.all).compactMap { $0["id"]?.stringValue } == ["b"])
        #expect(alice.authTokenHint?.length ?? 0 > 100)
        #expect(alice.authTokenHint?.description.contains("…") == true)
    }

    /// As a service secured the usual ASP.NET Core way expects it; `todosync serve` takes either header.
    @Test func aBearerTokenSignsInAndTheStyleIsKeptWithTheStore() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let proxy = try await service.proxy()
        let sent = Mutex<[(authorization: String?, zumo: String?)]>([])
        proxy.intercept { request, _ in
            sent.withLock { $0.append((request.header("Authorization"), request.header("X-ZUMO-AUTH"))) }
            return nil
        }
        let token = try await TokenIssuer.token(for: "alice", signIn: Self.signIn)
        var configuration = SyncConfiguration(remoteURL: proxy.endpoint, authToken: token)
        configuration.authStyle = .bearer
        let store = folder.file("alice.sqlite")
        let context = try SyncContext(path: store, configuration: configuration)
        try await context.table("todoitem").insert(["id": "a", "text": "alice's"])
        #expect(try await context.push().pushed.count == 1)
        try await context.close()

        let reopened = try SyncContext(path: store)
        #expect(reopened.authStyle == .bearer)
        try await reopened.table("todoitem").pull(queryId: "all")
        let headers = sent.withLock { $0 }
        #expect(headers.count >= 2)
        #expect(headers.allSatisfy { $0.authorization == "Bearer " + token && $0.zumo == nil })
        // Another device of alice's reads her row: written with her Bearer token, it is hers.
        let other = try SyncContext(path: folder.file("other.sqlite"), configuration: configuration)
        try await other.table("todoitem").pull(queryId: "all")
        #expect(try other.table("todoitem").item(id: "a")?["text"] == "alice's")
        await proxy.stop()
        await service.stop()
    }

    @Test func eachProtocolsUsualStyleIsTheDefault() {
        #expect(AuthStyle.usual(for: .v2) == .zumo && AuthStyle.usual(for: .v3) == .bearer)
        let url = URL(string: "http://127.0.0.1:1")!
        let v2 = HTTPTransport(
            baseURL: url, applicationKey: nil, authToken: "t",
            deadlines: ExchangeDeadlines(idle: 1, total: 1, clock: SystemWallClock()))
        #expect(v2.authField("t")?.name.canonicalName == "x-zumo-auth")
        #expect(v2.speaking(.v3).authField("t")?.value == "Bearer t")
    }

    @Test func refusedTokenStopsTheSyncAndKeepsTheQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let expired = try await TokenIssuer.token(
            for: "alice", signIn: Self.signIn, lifetime: .seconds(60), now: Date() - 3600)
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: service.endpoint, authToken: expired))
        try await context.table("todoitem").insert(["id": "a", "text": "kept"])
        do {
            _ = try await context.push()
            Issue.record("a push with an expired token succeeded")
        } catch let error as SyncError {
            guard case .stopped(.notAuthorized(401, _)) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(error.description.contains("sign-in expired or invalid"))
            #expect(!error.description.contains(expired))
        }
        #expect(try context.status().pending == 1)
        try await context.setAuthToken(try await TokenIssuer.token(for: "alice", signIn: Self.signIn))
        #expect(try await context.push().pushed.count == 1)
        #expect(try context.status().pending == 0)
    }
}
