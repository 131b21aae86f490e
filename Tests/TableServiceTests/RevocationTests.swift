import Foundation
import HTTPTypes
import SyncProtocol
import TestSupport
import Testing

@testable import TableService

/// An admin revokes one user's or one device's access: every request of theirs is refused with 401
/// and a body that says so (and whether to wipe), others are untouched, and restoring undoes it.
@Suite struct RevocationTests {
    static let adminKey = "fleet-admin-key-0123456789"
    static let admin: HTTPFields = [.authorization: "Bearer \(adminKey)", .contentType: "application/json"]

    static func signedIn(_ token: String, device: String) -> HTTPFields {
        var headers = SignedInUsersTests.headers(token)
        headers[ProtocolHeader.installationID] = device
        return headers
    }

    static func configure(_ configuration: inout TableService.Configuration) {
        configuration.adminKey = adminKey
        configuration.signIn = SignedInUsersTests.signIn
    }

    @Test(arguments: Backend.all) func aRevokedUserIsRefusedEverywhereUntilRestored(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["todoitem"], page: true, configure: Self.configure) { server in
            let alice = Self.signedIn(try await SignedInUsersTests.token("alice"), device: "alice-phone")
            let bob = Self.signedIn(try await SignedInUsersTests.token("bob"), device: "bob-phone")
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "a1"], headers: alice).status == 201)
            #expect(try await server.send(.post, "/tables/todoitem", json: ["id": "b1"], headers: bob).status == 201)

            let revoked = try await server.send(
                .post, "/service/api/users/alice/revoke", headers: Self.admin, body: Data(#"{"wipe": true}"#.utf8))
            #expect(revoked.status == 200)
            for request in [("GET", "/tables/todoitem"), ("POST", "/tables/todoitem")] {
                let refused = try await server.send(
                    HTTPRequest.Method(request.0)!, request.1, headers: alice,
                    body: request.0 == "POST" ? Data(#"{"id":"a2"}"#.utf8) : nil)
                #expect(refused.status == 401)
                let revocation = refused.object?["revoked"] as? [String: Any]
                #expect(revocation?["kind"] as? String == "user" && revocation?["subject"] as? String == "alice")
                #expect(revocation?["wipe"] as? Bool == true)
                #expect((refused.object?["error"] as? String)?.contains("revoked") == true)
            }
            #expect(try await server.send(.get, "/tables/todoitem", headers: bob).status == 200)
            let list = try await server.send(.get, "/service/api/revocations", headers: Self.admin)
            #expect((list.object?["revocations"] as? [[String: Any]])?.map { $0["subject"] as? String } == ["alice"])

            let restored = try await server.send(.post, "/service/api/users/alice/restore-access", headers: Self.admin)
            #expect(restored.status == 200)
            #expect(try await server.send(.get, "/tables/todoitem", headers: alice).status == 200)
            let again = try await server.send(.post, "/service/api/users/alice/restore-access", headers: Self.admin)
            #expect(again.status == 404)
        }
    }

    @Test func aRevokedDeviceIsRefusedWhoeverUsesIt() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"], page: true, configure: { $0.adminKey = Self.adminKey })
        {
            server in
            let phone: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.installationID: "lost-phone"]
            let other: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.installationID: "tablet"]
            #expect(try await server.send(.get, "/tables/todoitem", headers: phone).status == 200)
            #expect(
                try await server.send(.post, "/service/api/devices/lost-phone/revoke", headers: Self.admin).status
                    == 200)
            let refused = try await server.send(.get, "/tables/todoitem", headers: phone)
            #expect(refused.status == 401)
            #expect((refused.object?["revoked"] as? [String: Any])?["wipe"] as? Bool == false)
            #expect(try await server.send(.get, "/tables/todoitem", headers: other).status == 200)
        }
    }

    @Test func revokingSomeoneUnknownOrWithABadBodyIsRefusedWithAMessage() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"], page: true, configure: Self.configure) { server in
            let nobody = try await server.send(.post, "/service/api/users/nobody/revoke", headers: Self.admin)
            #expect(nobody.status == 404 && (nobody.object?["error"] as? String)?.contains("nobody") == true)
            let device = try await server.send(.post, "/service/api/devices/ghost/revoke", headers: Self.admin)
            #expect(device.status == 404)
            let alice = Self.signedIn(try await SignedInUsersTests.token("alice"), device: "alice-phone")
            #expect(try await server.send(.get, "/tables/todoitem", headers: alice).status == 200)
            let bad = try await server.send(
                .post, "/service/api/users/alice/revoke", headers: Self.admin, body: Data(#"{"wipe": "yes"}"#.utf8))
            #expect(bad.status == 400)
            let noKey = try await server.send(.post, "/service/api/users/alice/revoke", headers: [:])
            #expect(noKey.status == 401)
            #expect(try await server.send(.get, "/tables/todoitem", headers: alice).status == 200)
        }
    }

    /// A revoke taken by one instance is refused by another within about a second (its fleet pass
    /// reads the revocations again); prints how long it took.
    @Test(.enabled(if: Backend.all.contains(.postgres)), .timeLimit(.minutes(10)))
    func aRevokeOnOneInstanceIsRefusedByTheOther() async throws {
        try await withTestServer(.postgres, tables: ["todoitem"], page: true, configure: Self.configure) { first in
            try await withTestServer(.postgres, sharing: first, page: true, configure: Self.configure) { second in
                let alice = Self.signedIn(try await SignedInUsersTests.token("alice"), device: "alice-phone")
                #expect(try await first.send(.get, "/tables/todoitem", headers: alice).status == 200)
                #expect(try await second.send(.get, "/tables/todoitem", headers: alice).status == 200)
                let start = ContinuousClock.now
                #expect(
                    try await first.send(.post, "/service/api/users/alice/revoke", headers: Self.admin).status == 200)
                try await eventually("the other instance refuses alice") {
                    try await second.send(.get, "/tables/todoitem", headers: alice).status == 401
                }
                print("revoke on one instance → refused by the other after \(ContinuousClock.now - start)")
            }
        }
    }

    /// The instance that takes a revoke refuses at once, even while its bookkeeping reads the table
    /// again: a read that began before the revoke committed must not put the old list back.
    @Test(arguments: Backend.all) func aReadOfTheTableFromBeforeARevokeDoesNotUndoIt(_ backend: Backend) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
        let revocations = Revocations(store: store)
        let mark = revocations.changeMark
        let before = try await revocations.read()
        try await revocations.revoke(Revocation(kind: .user, subject: "alice", wipe: false, revokedAt: 1))
        revocations.apply(before, readAfter: mark)
        #expect(revocations.refusal(user: "alice", device: nil) != nil)

        let markRevoked = revocations.changeMark
        let revoked = try await revocations.read()
        #expect(try await revocations.restore(.user, "alice"))
        revocations.apply(revoked, readAfter: markRevoked)
        #expect(revocations.refusal(user: "alice", device: nil) == nil)

        // A read after the last change is put in force: what another instance revoked meanwhile.
        try await store.execute([
            SQLStatement(
                sql:
                    #"INSERT INTO "__revocations" ("kind", "subject", "wipe", "revokedAt") VALUES ('device', 'lost', 1, 2)"#
            )
        ])
        try await revocations.reload()
        #expect(revocations.refusal(user: nil, device: "lost")?.wipe == true)
    }

    /// A restarted instance refuses whom the table refuses from its first request: the check reads
    /// the table when this instance has not yet, whatever its bookkeeping has done.
    @Test(arguments: Backend.all) func aNewInstanceRefusesFromItsFirstRequest(_ backend: Backend) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
        try await Revocations(store: store).revoke(Revocation(kind: .user, subject: "alice", wipe: true, revokedAt: 1))

        let restarted = Revocations(store: store)
        #expect(restarted.refusal(user: "alice", device: nil) == nil)
        #expect(try await restarted.checked(user: "alice", device: "phone")?.wipe == true)
        #expect(try await restarted.checked(user: "bob", device: "phone") == nil)
    }
}
