import Foundation
import HTTPTypes
import SyncProtocol
import Testing

@testable import TableService

/// A revoked device deposits its queued changes in escrow, once each, its own only; the admin
/// applies one through the write path (a row changed since is a 409 with both values) or discards it.
@Suite struct EscrowTests {
    static let admin = RevocationTests.admin

    static func deposit(_ operations: [EscrowDeposit.Operation]) -> Data {
        try! JSONEncoder().encode(EscrowDeposit(operations: operations))
    }

    static func operation(
        _ id: Int64, _ kind: String, _ item: String, _ values: JSONValue? = nil
    ) -> EscrowDeposit.Operation {
        EscrowDeposit.Operation(
            operationID: id, table: "todoitem", operation: kind, itemID: item, item: values,
            queuedAt: "2026-12-07T03:00:00.000Z")
    }

    @Test(arguments: Backend.all) func aRevokedDeviceDepositsOnceAndTheAdminAppliesOrDiscards(
        _ backend: Backend
    )
        async throws
    {
        try await withTestServer(backend, tables: ["todoitem"], page: true, configure: RevocationTests.configure) {
            server in
            let alice = RevocationTests.signedIn(try await SignedInUsersTests.token("alice"), device: "alice-phone")
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a1", "text": "one"], headers: alice)
            let version = try #require(created.object?["version"] as? String)
            // Not revoked: nothing to deposit.
            let early = try await server.send(
                .post, "/devices/alice-phone/escrow", headers: alice, body: Self.deposit([]))
            #expect(early.status == 409)

            #expect(try await server.send(.post, "/service/api/users/alice/revoke", headers: Self.admin).status == 200)
            let operations = [
                Self.operation(1, "insert", "a2", ["id": "a2", "text": "two"]),
                Self.operation(2, "update", "a1", ["id": "a1", "text": "one, edited", "version": .string(version)]),
                Self.operation(3, "update", "a1", ["id": "a1", "text": "stale", "version": "AAAAAAAAAAA="]),
            ]
            let first = try await server.send(
                .post, "/devices/alice-phone/escrow", headers: alice, body: Self.deposit(operations))
            #expect(first.status == 200)
            #expect(first.object?["held"] as? Int == 3 && first.object?["alreadyHeld"] as? Int == 0)
            // Sent again (an answer lost, a power cut): held once.
            let again = try await server.send(
                .post, "/devices/alice-phone/escrow", headers: alice, body: Self.deposit(operations))
            #expect(again.object?["held"] as? Int == 0 && again.object?["alreadyHeld"] as? Int == 3)

            let listed = try await server.send(.get, "/service/api/escrow", headers: Self.admin)
            let entries = try #require(listed.object?["escrow"] as? [[String: Any]])
            #expect(entries.count == 3)
            #expect(entries.allSatisfy { $0["user"] as? String == "alice" && $0["device"] as? String == "alice-phone" })

            let ids = entries.map { $0["id"] as! String }
            // Held, not applied: the insert's apply is its first write (a second would be a 409).
            let insert = try await server.send(.post, "/service/api/escrow/\(ids[0])/apply", headers: Self.admin)
            #expect(insert.status == 200)
            let update = try await server.send(.post, "/service/api/escrow/\(ids[1])/apply", headers: Self.admin)
            #expect(update.status == 200)
            #expect((update.object?["item"] as? [String: Any])?["text"] as? String == "one, edited")
            let stale = try await server.send(.post, "/service/api/escrow/\(ids[2])/apply", headers: Self.admin)
            #expect(stale.status == 409)
            #expect((stale.object?["escrowed"] as? [String: Any])?["text"] as? String == "stale")
            #expect((stale.object?["current"] as? [String: Any])?["text"] as? String == "one, edited")
            #expect(
                try await server.send(.post, "/service/api/escrow/\(ids[2])/discard", headers: Self.admin).status == 200
            )
            #expect(
                try await server.send(.post, "/service/api/escrow/\(ids[2])/discard", headers: Self.admin).status == 404
            )
            let left = try await server.send(.get, "/service/api/escrow", headers: Self.admin)
            #expect((left.object?["escrow"] as? [[String: Any]])?.isEmpty == true)

            // The applied rows are alice's, as if her device had pushed them.
            #expect(
                try await server.send(.post, "/service/api/users/alice/restore-access", headers: Self.admin).status
                    == 200)
            let rows = try await server.send(.get, "/tables/todoitem", headers: alice)
            #expect((rows.array ?? []).compactMap { $0["id"] as? String }.sorted() == ["a1", "a2"])
        }
    }

    @Test func forgedOrOversizedDepositsAreRefusedWithAMessage() async throws {
        try await withTestServer(.sqlite, tables: ["todoitem"], page: true, configure: RevocationTests.configure) {
            server in
            let alice = RevocationTests.signedIn(try await SignedInUsersTests.token("alice"), device: "alice-phone")
            let bob = RevocationTests.signedIn(try await SignedInUsersTests.token("bob"), device: "bob-phone")
            #expect(try await server.send(.get, "/tables/todoitem", headers: alice).status == 200)
            #expect(try await server.send(.get, "/tables/todoitem", headers: bob).status == 200)
            #expect(try await server.send(.post, "/service/api/users/bob/revoke", headers: Self.admin).status == 200)
            let body = Self.deposit([Self.operation(1, "insert", "b1", ["id": "b1"])])
            // Bob deposits for alice's phone: the address is not his device.
            let otherAddress = try await server.send(.post, "/devices/alice-phone/escrow", headers: bob, body: body)
            #expect(otherAddress.status == 403)
            // Bob's token on alice's phone (as its installation id): the phone synced as alice.
            var forged = bob
            forged[ProtocolHeader.installationID] = "alice-phone"
            #expect(
                try await server.send(.post, "/devices/alice-phone/escrow", headers: forged, body: body).status == 403)
            // Not a deposit; too many operations; too large.
            let garbage = try await server.send(
                .post, "/devices/bob-phone/escrow", headers: bob, body: Data("[1]".utf8))
            #expect(garbage.status == 400 && (garbage.object?["error"] as? String)?.contains("operations") == true)
            let many = Self.deposit(
                (0...Int64(EscrowDeposit.maximumOperations)).map { Self.operation($0, "delete", "x\($0)") })
            #expect(try await server.send(.post, "/devices/bob-phone/escrow", headers: bob, body: many).status == 413)
            let huge = Self.deposit([
                Self.operation(
                    1, "insert", "b1",
                    ["id": "b1", "text": .string(String(repeating: "x", count: EscrowDeposit.maximumBytes))])
            ])
            #expect(try await server.send(.post, "/devices/bob-phone/escrow", headers: bob, body: huge).status == 413)
            let badKind = Self.deposit([Self.operation(1, "upsert", "b1", ["id": "b1"])])
            #expect(
                try await server.send(.post, "/devices/bob-phone/escrow", headers: bob, body: badKind).status == 400)
            let listed = try await server.send(.get, "/service/api/escrow", headers: Self.admin)
            #expect((listed.object?["escrow"] as? [[String: Any]])?.isEmpty == true)
        }
    }
}
