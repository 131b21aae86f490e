import Foundation
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// The client sends the signed-in user's token as `X-ZUMO-AUTH`; a refused token stops the sync
/// with a message that says so, and keeps the queue.
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
        try alice.table("todoitem").insert(["id": "a", "text": "alice's"])
        try bob.table("todoitem").insert(["id": "b", "text": "bob's"])
        #expect(try await alice.push().pushed.count == 1)
        #expect(try await bob.push().pushed.count == 1)
        try await alice.table("todoitem").pull(queryId: "all")
        try await bob.table("todoitem").pull(queryId: "all")
        #expect(try alice.table("todoitem").query(.all).compactMap { $0["id"]?.stringValue } == ["a"])
        #expect(try bob.table("todoitem").query(.all).compactMap { $0["id"]?.stringValue } == ["b"])
        #expect(alice.authTokenHint?.length ?? 0 > 100)
        #expect(alice.authTokenHint?.description.contains("…") == true)
    }

    @Test func refusedTokenStopsTheSyncAndKeepsTheQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let expired = try await TokenIssuer.token(
            for: "alice", signIn: Self.signIn, lifetime: .seconds(60), now: Date() - 3600)
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: service.endpoint, authToken: expired))
        try context.table("todoitem").insert(["id": "a", "text": "kept"])
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
