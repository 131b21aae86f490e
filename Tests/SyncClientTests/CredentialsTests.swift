import Foundation
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// The application key and the sign-in token live in a file beside the store, readable by its
/// owner only; no byte of the store, its WAL, the flight recorder or a snapshot holds them.
@Suite struct CredentialsTests {
    static let signIn = SignIn(secret: "a-test-secret-of-32-characters!!", perUserTables: ["todoitem"])
    static let key = "application-key-4b1f9c"

    /// The permission bits of the file at `path`.
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// Every byte of the store: its file, WAL and shared memory.
    static func storeBytes(_ path: String) -> Data {
        ["", "-wal", "-shm"].reduce(into: Data()) { bytes, suffix in
            bytes += FileManager.default.contents(atPath: path + suffix) ?? Data()
        }
    }

    static func holds(_ bytes: Data, _ secret: String) -> Bool {
        bytes.range(of: Data(secret.utf8)) != nil
    }

    @Test func theKeyAndTheTokenAreKeptBesideTheStoreAndNeverInIt() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, applicationKey: Self.key, signIn: Self.signIn)
        let token = try await TokenIssuer.token(for: "alice", signIn: Self.signIn)
        let path = folder.file("nested/alice.sqlite")
        let context = try SyncContext(
            path: path,
            configuration: .init(remoteURL: service.endpoint, applicationKey: Self.key, authToken: token))
        try await context.table("todoitem").insert(["id": "a", "text": "alice's"])
        #expect(try await context.push().pushed.count == 1)
        try await context.table("todoitem").pull(queryId: "all")
        let snapshot = folder.file("snapshot.sqlite")
        try context.writeRedactedSnapshot(to: snapshot)
        let recorded = try context.exchanges().exchanges
        #expect(!recorded.isEmpty)
        try await context.close()

        #expect(try Self.mode(path) == 0o600)
        #expect(try Self.mode(path + ".credentials") == 0o600)
        #expect(try Self.mode(folder.file("nested")) == 0o700)
        for bytes in [Self.storeBytes(path), Self.storeBytes(snapshot)] {
            #expect(!Self.holds(bytes, Self.key) && !Self.holds(bytes, token))
        }
        let credentials = try String(contentsOfFile: path + ".credentials", encoding: .utf8)
        #expect(credentials.contains(Self.key) && credentials.contains(token))

        // Opened again without them, the store still signs in: they come from the file.
        let reopened = try SyncContext(path: path)
        try await reopened.table("todoitem").insert(["id": "b", "text": "alice's second"])
        #expect(try await reopened.push().pushed.count == 1)
        try await reopened.close()
        #expect(!Self.holds(Self.storeBytes(path), token))
        await service.stop()
    }

    /// A store written by an earlier todosync kept both in its `__config`.
    @Test func anOlderStoreHasItsSecretsMovedOutOfItsBytes() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("old.sqlite")
        let token = "an-old-token-that-must-go-9f8e7d"
        let old = try SyncContext(path: path)
        try await old.write { [store = old.store] db in
            try store.setConfig(db, "applicationKey", Self.key)
            try store.setConfig(db, "authToken", token)
        }
        try await old.close()
        #expect(Self.holds(Self.storeBytes(path), token))

        let context = try SyncContext(path: path)
        #expect(context.authTokenHint != nil)
        try await context.close()
        #expect(!Self.holds(Self.storeBytes(path), token) && !Self.holds(Self.storeBytes(path), Self.key))
        let moved = try CredentialsFile(store: path).load()
        #expect(moved == Credentials(applicationKey: Self.key, authToken: token))
    }

    @Test func removingBothRemovesTheFile() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("store.sqlite")
        let context = try SyncContext(path: path, configuration: .init(authToken: "a-token-to-remove-later"))
        #expect(FileManager.default.fileExists(atPath: path + ".credentials"))
        try await context.setAuthToken(nil)
        #expect(!FileManager.default.fileExists(atPath: path + ".credentials"))
        try await context.close()
    }
}
