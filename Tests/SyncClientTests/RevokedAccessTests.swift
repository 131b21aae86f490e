import FaultProxy
import Foundation
import GRDB
import HTTPTypes
import SyncProtocol
import Synchronization
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// An admin revokes one user's or one device's access: at its next contact the device hands its
/// unsynced changes to the service's escrow, then removes its copy with a receipt (wipe) or keeps
/// it read-only; other devices lose nothing, and restoring access lifts the read-only state.
@Suite struct RevokedAccessTests {
    static let adminKey = "fleet-admin-key-0123456789"

    /// Alice, bob and carol each sync five rows, then make ten changes offline.
    struct Fleet {
        let folder: TemporaryFolder
        let service: TestService
        let devices: [String: SyncContext]

        init() async throws {
            folder = try TemporaryFolder()
            service = try await TestService.sqlite(in: folder, tables: ["todoitem"]) { configuration in
                configuration.signIn = SignInTests.signIn
                configuration.adminKey = RevokedAccessTests.adminKey
                configuration.templatesFolder = ProjectResources.templatesFolder
            }
            var devices: [String: SyncContext] = [:]
            for user in ["alice", "bob", "carol"] {
                let context = try SyncContext(
                    path: folder.file("\(user).sqlite"),
                    configuration: .init(
                        remoteURL: service.endpoint,
                        authToken: try await TokenIssuer.token(for: user, signIn: SignInTests.signIn)))
                let table = context.table("todoitem")
                for index in 0..<5 { try await table.insert(["id": .string("\(user)-\(index)"), "text": "synced"]) }
                _ = try await context.push()
                for index in 0..<5 {
                    try await table.update(["id": .string("\(user)-\(index)"), "text": "edited offline"])
                    try await table.insert(["id": .string("\(user)-new-\(index)"), "text": "new offline"])
                }
                devices[user] = context
            }
            self.devices = devices
        }

        func admin(_ method: HTTPRequest.Method, _ path: String, _ body: String? = nil) async throws -> [String: Any] {
            let answer = try await TestHTTPClient().send(
                method, service.url + "/service/api" + path,
                headers: [.authorization: "Bearer \(RevokedAccessTests.adminKey)", .contentType: "application/json"],
                body: body.map { Data($0.utf8) })
            #expect((200..<300).contains(answer.status), "\(method) \(path): \(answer.status)")
            return (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:]
        }

        /// The service's rows of `user`: id → text.
        func rows(of user: String) throws -> [String: String] {
            try withServiceDatabase(service) { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(
                        db, sql: "SELECT id, text FROM todoitem WHERE __owner = ?", arguments: [user]
                    ).map { ($0["id"] as String, $0["text"] as String) })
            }
        }

        func escrow() async throws -> [[String: Any]] {
            try await admin(.get, "/escrow")["escrow"] as? [[String: Any]] ?? []
        }
    }

    static func expectRevoked(_ context: SyncContext, wipe: Bool) async {
        // A pull: a push of nothing asks the service nothing.
        await #expect {
            _ = try await context.pull("todoitem", queryId: "all")
        } throws: { error in
            guard case SyncError.stopped(.accessRevoked(let revocation)) = error else { return false }
            return revocation.wipe == wipe
        }
    }

    @Test func aRevokedUserWithWipeEscrowsEveryEditAndTheOthersLoseNothing() async throws {
        let fleet = try await Fleet()
        defer { Task { await fleet.service.stop() } }
        _ = try await fleet.admin(.post, "/users/bob/revoke", #"{"wipe": true}"#)

        let bob = try #require(fleet.devices["bob"])
        await Self.expectRevoked(bob, wipe: true)
        // Bob's ten edits are in escrow, none applied; his device holds nothing and says why.
        let escrow = try await fleet.escrow()
        #expect(escrow.count == 10)
        #expect(escrow.allSatisfy { $0["user"] as? String == "bob" && $0["device"] as? String == bob.installationID })
        let revoked = try #require(try bob.revokedAccess())
        #expect(revoked.phase == .wiped && revoked.escrowed == 10 && revoked.receiptSent)
        #expect(try bob.table("todoitem").count() == 0)
        #expect(try bob.table("todoitem").operations().isEmpty)
        let purged = Set(revoked.receipt?.purged["todoitem"] ?? [])
        #expect(purged == Set((0..<5).flatMap { ["bob-\($0)", "bob-new-\($0)"] }))
        await #expect(throws: SyncError.self) { try await bob.table("todoitem").insert(["text": "after"]) }
        #expect(revoked.summary.contains("10 unsynced changes are kept in the service's escrow"))

        // The receipt reached the service; its rows of bob are as they were before the revoke.
        let receipts = try await TestHTTPClient().send(
            .get, fleet.service.url + "/service/escrow", headers: [.authorization: "Bearer \(Self.adminKey)"])
        #expect(String(decoding: receipts.body, as: UTF8.self).contains("bob-new-0"))
        let bobs = try fleet.rows(of: "bob")
        #expect(bobs.count == 5 && bobs.values.allSatisfy { $0 == "synced" })

        // Alice and carol lose nothing: their twenty edits reach the service.
        for user in ["alice", "carol"] {
            let context = try #require(fleet.devices[user])
            #expect(try await context.push().pushed.count == 10)
            #expect(try context.revokedAccess() == nil)
        }
        for user in ["alice", "carol"] {
            let rows = try fleet.rows(of: user)
            #expect(rows.count == 10 && rows.values.filter { $0 == "edited offline" }.count == 5)
        }
    }

    @Test func aRevokedDeviceWithoutWipeStaysReadOnlyUntilAccessIsRestored() async throws {
        let fleet = try await Fleet()
        defer { Task { await fleet.service.stop() } }
        let alice = try #require(fleet.devices["alice"])
        _ = try await fleet.admin(.post, "/devices/\(alice.installationID)/revoke")

        await Self.expectRevoked(alice, wipe: false)
        let revoked = try #require(try alice.revokedAccess())
        #expect(revoked.phase == .readOnly && revoked.escrowed == 10)
        #expect(try alice.table("todoitem").count() == 10)
        #expect(try alice.table("todoitem").operations().isEmpty)
        await #expect {
            try await alice.table("todoitem").update(["id": "alice-0", "text": "refused"])
        } throws: { error in
            guard case SyncError.readOnly = error else { return false }
            return true
        }
        // Contact again while revoked: nothing is deposited twice.
        await Self.expectRevoked(alice, wipe: false)
        #expect(try await fleet.escrow().count == 10)

        // The admin applies one entry, restores access: the device syncs and edits again.
        let first = try #require(try await fleet.escrow().first?["id"] as? String)
        _ = try await fleet.admin(.post, "/escrow/\(first)/apply")
        _ = try await fleet.admin(.post, "/devices/\(alice.installationID)/restore-access")
        _ = try await alice.pull("todoitem", queryId: "all")
        #expect(try alice.revokedAccess() == nil)
        try await alice.table("todoitem").update(["id": "alice-0", "text": "after restore"])
        #expect(try await alice.push().pushed.count == 1)
    }

    /// How a service may misanswer the deposit: it says it held fewer than sent, answers something
    /// that is not an answer, redirects elsewhere, or fails.
    enum Misanswer: String, CaseIterable, Sendable {
        case heldFewer, notJSON, redirected, failing

        var response: ProxiedResponse {
            switch self {
            case .heldFewer: .json(200, #"{"held":1,"alreadyHeld":0}"#)
            case .notJSON: .json(200, "<html>ok</html>")
            case .redirected:
                ProxiedResponse(
                    status: 307, headers: ["Location": "http://127.0.0.1:9/devices/x/escrow"], body: [])
            case .failing: .json(503, #"{"error":"down"}"#)
            }
        }
    }

    /// A device whose deposit is misanswered keeps every change queued and its rows: it wipes only
    /// once the service says it holds each one; the next honest contact finishes.
    @Test(arguments: Misanswer.allCases) func aMisansweredDepositWipesNothing(_ misanswer: Misanswer) async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder, tables: ["todoitem"]) { configuration in
            configuration.adminKey = Self.adminKey
            configuration.templatesFolder = ProjectResources.templatesFolder
        }
        let proxy = try await service.proxy()
        let lying = Mutex(true)
        proxy.intercept { request, _ in
            guard request.path.hasSuffix("/escrow"), lying.withLock({ $0 }) else { return nil }
            return .answer(misanswer.response)
        }
        let context = try SyncContext(
            path: folder.file("phone.sqlite"), configuration: .init(remoteURL: proxy.endpoint))
        let table = context.table("todoitem")
        try await table.insert(["id": "synced", "text": "synced"])
        _ = try await context.push()
        try await table.insert(["id": "offline-1", "text": "one"])
        try await table.update(["id": "synced", "text": "edited"])
        let revoke = try await TestHTTPClient().send(
            .post, service.url + "/service/api/devices/\(context.installationID)/revoke",
            headers: [.authorization: "Bearer \(Self.adminKey)", .contentType: "application/json"],
            body: Data(#"{"wipe": true}"#.utf8))
        #expect(revoke.status == 200)

        await #expect(throws: SyncError.self) { _ = try await context.pull("todoitem", queryId: "all") }
        #expect(try table.count() == 2)
        #expect(try table.operations().count == 2)
        #expect(try context.revokedAccess()?.phase == .depositing)

        lying.withLock { $0 = false }
        await Self.expectRevoked(context, wipe: true)
        #expect(try table.count() == 0 && table.operations().isEmpty)
        #expect(try context.revokedAccess()?.escrowed == 2)
        await proxy.stop()
        await service.stop()
    }
}
