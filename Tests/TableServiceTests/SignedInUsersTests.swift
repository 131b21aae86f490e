import Foundation
import HTTPTypes
import JWTKit
import SyncProtocol
import Testing

@testable import TableService

/// Signed-in users (`X-ZUMO-AUTH`): tokens checked with jwt-kit, and per-user tables where each
/// user sees and changes only their own rows.
@Suite struct SignedInUsersTests {
    static let secret = "a-test-secret-of-32-characters!!"
    static let signIn = SignIn(secret: secret, perUserTables: ["todoitem"])

    static func token(
        _ user: String, _ signIn: SignIn = signIn, lifetime: Duration = .seconds(3600), at now: Date = Date()
    )
        async throws -> String
    {
        try await TokenIssuer.token(for: user, signIn: signIn, lifetime: lifetime, now: now)
    }

    static func headers(_ token: String?) -> HTTPFields {
        var headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
        headers[ProtocolHeader.authToken] = token
        return headers
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test(arguments: Backend.all) func everyTableRequestNeedsAValidTokenWhenSignInIsRequired(
        _ backend: Backend
    ) async throws {
        var required = SignIn(secret: Self.secret)
        required.required = true
        try await withTestServer(backend, tables: ["todoitem"], configure: { $0.signIn = required }) { server in
            let anonymous = try await server.send(.get, "/tables/todoitem")
            #expect(anonymous.status == 401)
            #expect((anonymous.object?["error"] as? String)?.contains("X-ZUMO-AUTH") == true)
            let valid = try await Self.token("alice", required)
            #expect(try await server.send(.get, "/tables/todoitem", headers: Self.headers(valid)).status == 200)

            let expired = try await Self.token("alice", required, lifetime: .seconds(3600), at: Date() - 7200)
            let wrongSignature = try await Self.token("alice", SignIn(secret: "another-secret-of-32-characters!!"))
            let wrongAudience = try await Self.token("alice", SignIn(secret: Self.secret, audience: "urn:other:app"))
            let wrongIssuer = try await Self.token("alice", SignIn(secret: Self.secret, issuer: "https://elsewhere"))
            let notYet = try await Self.token("alice", required, at: Date() + 3600)
            let payload =
                #"{"sub":"alice","iss":"urn:microsoft:windows-azure:zumo","aud":"urn:microsoft:windows-azure:zumo","exp":4102444800}"#
            let unsigned = Self.base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + Self.base64URL(payload) + "."
            let refused: [(String, String, String)] = [
                ("expired", expired, "expired"), ("wrong signature", wrongSignature, "signature"),
                ("wrong audience", wrongAudience, "audience"), ("wrong issuer", wrongIssuer, "issued by"),
                ("not valid yet", notYet, "not valid before"), ("none algorithm", unsigned, "'none'"),
                ("garbage", "not.a.token", "readable"),
            ]
            for (name, token, reason) in refused {
                let reply = try await server.send(.get, "/tables/todoitem", headers: Self.headers(token))
                #expect(reply.status == 401, "\(name)")
                let message = reply.object?["error"] as? String ?? ""
                #expect(message.contains(reason), "\(name): \(message)")
                #expect(!message.contains(token), "\(name): the message repeats the token")
            }
            // A little clock skew is tolerated.
            let justExpired = try await Self.token("alice", required, lifetime: .seconds(60), at: Date() - 90)
            #expect(try await server.send(.get, "/tables/todoitem", headers: Self.headers(justExpired)).status == 200)
        }
    }

    @Test(arguments: Backend.all) func usersOfAPerUserTableSeeOnlyTheirOwnRows(_ backend: Backend) async throws {
        try await withTestServer(backend, configure: { $0.signIn = Self.signIn }) { server in
            let alice = Self.headers(try await Self.token("alice"))
            let bob = Self.headers(try await Self.token("bob"))
            for id in ["a1", "a2"] {
                #expect(
                    try await server.send(
                        .post, "/tables/todoitem", json: ["id": id, "text": "alice's"], headers: alice
                    )
                    .status == 201)
            }
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "b1", "text": "bob's"], headers: bob)
            #expect(created.status == 201)
            #expect(created.object?["__owner"] == nil)

            let aliceList = try await server.send(.get, "/tables/todoitem", headers: alice)
            #expect(aliceList.array?.compactMap { $0["id"] as? String }.sorted() == ["a1", "a2"])
            let filtered = try await server.send(.get, "/tables/todoitem?$filter=text%20ne%20null", headers: bob)
            #expect(filtered.array?.compactMap { $0["id"] as? String } == ["b1"])
            let counted = try await server.send(
                .get, "/tables/todoitem?$inlinecount=allpages&$top=1", headers: alice)
            #expect(counted.object?["count"] as? Int == 2)
            let pull = try await server.send(
                .get,
                "/tables/todoitem?$filter=(updatedAt%20ge%20datetimeoffset'1970-01-01T00:00:00.000Z')&$orderby=updatedAt"
                    + "&__includeDeleted=true&$top=50",
                headers: bob)
            #expect(pull.array?.compactMap { $0["id"] as? String } == ["b1"])

            // Bob cannot tell Alice's rows from missing ones.
            let version =
                try await server.send(.get, "/tables/todoitem/a1", headers: alice).object?["version"] as? String
            #expect(try await server.send(.get, "/tables/todoitem/a1", headers: bob).status == 404)
            var staleMatch = bob
            staleMatch[.ifMatch] = "\"stale\""
            for headers in [bob, staleMatch] {
                let patch = try await server.send(
                    .patch, "/tables/todoitem/a1", json: ["text": "bob was here"], headers: headers)
                #expect(patch.status == 404)
                #expect(try await server.send(.delete, "/tables/todoitem/a1", headers: headers).status == 404)
            }
            let stolenVersion = try await server.send(
                .patch, "/tables/todoitem/a1", json: ["text": "x", "version": "stale"], headers: bob)
            #expect(stolenVersion.status == 404)
            // A bare 400, as Datasync 10.1 answers: no item, and no word that the id exists.
            var bobV3 = bob
            bobV3[ProtocolHeader.apiVersion] = "3.0.0"
            for headers in [bob, bobV3] {
                let duplicate = try await server.send(
                    .post, "/tables/todoitem", json: ["id": "a1", "text": "mine?"], headers: headers)
                #expect(duplicate.status == 400)
                #expect(duplicate.object?["text"] == nil, "the 400 carries Alice's item: \(duplicate.text)")
                #expect(duplicate.header("ETag") == nil)
                #expect((duplicate.object?["error"] as? String)?.contains("exists") == false)
            }
            let own = try await server.send(.get, "/tables/todoitem/a1", headers: alice)
            #expect(own.object?["text"] as? String == "alice's")
            #expect(own.object?["version"] as? String == version)

            // Alice's own conflicts still carry her item.
            var aliceStale = alice
            aliceStale[.ifMatch] = "\"stale\""
            let conflict = try await server.send(
                .patch, "/tables/todoitem/a1", json: ["text": "y"], headers: aliceStale)
            #expect(conflict.status == 412)
            #expect(conflict.object?["text"] as? String == "alice's")
            let ownDuplicate = try await server.send(.post, "/tables/todoitem", json: ["id": "a1"], headers: alice)
            #expect(ownDuplicate.status == 409)
            #expect(ownDuplicate.object?["id"] as? String == "a1")
        }
    }

    @Test(arguments: Backend.all) func theOwnerCannotBeSentFilteredOrSkipped(_ backend: Backend) async throws {
        try await withTestServer(backend, configure: { $0.signIn = Self.signIn }) { server in
            let bob = Self.headers(try await Self.token("bob"))
            let forged = try await server.send(
                .post, "/tables/todoitem", json: ["id": "f", "__owner": "alice"], headers: bob)
            #expect(forged.status == 400)
            #expect(
                try await server.send(.get, "/tables/todoitem?$filter=__owner%20eq%20'alice'", headers: bob).status
                    == 400)
            #expect(try await server.send(.get, "/tables/todoitem?$select=__owner", headers: bob).status == 400)
            let anonymous = try await server.send(.get, "/tables/todoitem")
            #expect(anonymous.status == 401)
            #expect((anonymous.object?["error"] as? String)?.contains("'todoitem'") == true)
        }
    }

    @Test(arguments: Backend.all) func providerTokensAreCheckedWithTheJWKS(_ backend: Backend) async throws {
        let key = ES256PrivateKey()
        let parameters = try #require(key.publicKey.parameters)
        let jwks =
            #"{"keys":[{"kty":"EC","crv":"P-256","kid":"provider-1","use":"sig","alg":"ES256","x":"\#(parameters.x)","y":"\#(parameters.y)"}]}"#
        try await withTestServer(
            backend, tables: ["todoitem"],
            configure: {
                $0.signIn = SignIn(jwks: jwks, required: true)
            }
        ) { server in
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: key, kid: "provider-1")
            let claims = UserClaims(
                sub: "carol", iss: IssuerClaim(value: SignIn.mobileAppsIdentity),
                aud: AudienceClaim(value: [SignIn.mobileAppsIdentity]), exp: ExpirationClaim(value: Date() + 600),
                nbf: nil, iat: nil)
            let token = try await keys.sign(claims, kid: "provider-1")
            #expect(try await server.send(.get, "/tables/todoitem", headers: Self.headers(token)).status == 200)
            // An HS256 token is not accepted by a service that only knows the provider's keys.
            let hmac = try await Self.token("carol", SignIn(secret: Self.secret))
            #expect(try await server.send(.get, "/tables/todoitem", headers: Self.headers(hmac)).status == 401)
            let otherKey = JWTKeyCollection()
            await otherKey.add(ecdsa: ES256PrivateKey(), kid: "provider-1")
            let forged = try await otherKey.sign(claims, kid: "provider-1")
            #expect(try await server.send(.get, "/tables/todoitem", headers: Self.headers(forged)).status == 401)
        }
    }

    @Test(arguments: Backend.all) func theServicePageWhichShowsEveryRowNeedsTheKeyWhenUsersSignIn(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend, page: true, configure: { $0.signIn = Self.signIn }) { open in
            #expect(try await open.send(.get, "/service", headers: [:]).status == 404)
            try await withTestServer(
                backend, applicationKey: "operator-key", page: true,
                configure: {
                    $0.signIn = Self.signIn
                }
            ) { keyed throws in
                #expect(try await keyed.send(.get, "/service", headers: [:]).status == 401)
            }
        }
    }
}
