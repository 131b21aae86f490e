import Foundation
import HTTPServer
import JWTKit
import SyncProtocol

/// Checks the `X-ZUMO-AUTH` token of a request against a ``SignIn`` configuration and names its
/// user. The signature is jwt-kit's; the algorithm is chosen from the configuration, never from
/// the token alone (HS256 only with the secret, RS256/ES256 only with the JWKS, `none` never).
final class TokenVerifier: Sendable {
    let signIn: SignIn
    private let secretKeys: LazyKeys?
    private let providerKeys: LazyKeys?
    private let now: @Sendable () -> Date

    /// Checks that the configuration can verify anything (a secret or a readable JWKS).
    init(_ signIn: SignIn, now: @escaping @Sendable () -> Date = Date.init) throws(TableServiceError) {
        if let secret = signIn.secret, secret.utf8.count < TokenIssuer.minimumSecretLength {
            throw .invalidConfiguration(
                "The sign-in secret is \(secret.utf8.count) bytes long; HS256 needs at least "
                    + "\(TokenIssuer.minimumSecretLength) random bytes.")
        }
        if let jwks = signIn.jwks {
            do {
                _ = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
            } catch {
                throw .invalidConfiguration(
                    "The JWKS file is not a JSON Web Key Set ({\"keys\": [...]}); check --auth-jwks.")
            }
        }
        guard signIn.secret != nil || signIn.jwks != nil else {
            throw .invalidConfiguration("Sign-in needs a signing secret (--auth-secret) or a JWKS (--auth-jwks).")
        }
        self.signIn = signIn
        secretKeys = signIn.secret.map { secret in
            LazyKeys { await $0.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256) }
        }
        providerKeys = signIn.jwks.map { jwks in LazyKeys { try await $0.add(jwksJSON: jwks) } }
        self.now = now
    }

    /// The token a request carries: `X-ZUMO-AUTH: T` (Mobile Apps) or `Authorization: Bearer T`
    /// (ASP.NET Core, the Datasync toolkit's client); nil when it carries neither.
    static func token(of request: Request) -> String? {
        var token = request.headers[ProtocolHeader.authToken]
        if token == nil, let authorization = request.headers[.authorization],
            authorization.lowercased().hasPrefix("bearer ")
        {
            token = String(authorization.dropFirst("bearer ".count))
        }
        let trimmed = token?.trimmingCharacters(in: .whitespaces) ?? ""
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The user named by the request's token; nil when it carries none. A token that is present
    /// but not valid is refused (401), even where sign-in is optional.
    func user(of request: Request) async throws(TableError) -> String? {
        guard let token = Self.token(of: request) else { return nil }
        let algorithm: String
        do {
            algorithm = try DefaultJWTParser().parse(Array(token.utf8), as: UserClaims.self).header.alg ?? "none"
        } catch {
            throw .signInRefused("it is not a readable JSON Web Token with a user (sub)")
        }
        let keys: LazyKeys?
        switch algorithm {
        case "HS256": keys = secretKeys
        case "RS256", "ES256": keys = providerKeys
        default: throw .signInRefused("its algorithm '\(algorithm)' is not accepted")
        }
        guard let keys else { throw .signInRefused("this service does not accept \(algorithm) tokens") }
        let claims: UserClaims
        do {
            claims = try await keys.collection().verify(token, as: UserClaims.self)
        } catch {
            throw .signInRefused("its signature does not match this service's keys")
        }
        try check(claims)
        return claims.sub.value
    }

    private func check(_ claims: UserClaims) throws(TableError) {
        guard claims.iss?.value == signIn.issuer else {
            throw .signInRefused("it was issued by '\(claims.iss?.value ?? "nobody")', not '\(signIn.issuer)'")
        }
        guard claims.aud?.value.contains(signIn.audience) == true else {
            throw .signInRefused("it is meant for another audience than '\(signIn.audience)'")
        }
        guard let expiry = claims.exp?.value else { throw .signInRefused("it has no expiry (exp)") }
        let leeway = Double(signIn.leeway.components.seconds)
        let current = now()
        guard current < expiry.addingTimeInterval(leeway) else {
            throw .signInRefused("it expired at \(expiry.formatted(.iso8601))")
        }
        if let notBefore = claims.nbf?.value, current.addingTimeInterval(leeway) < notBefore {
            throw .signInRefused("it is not valid before \(notBefore.formatted(.iso8601))")
        }
        guard !claims.sub.value.isEmpty else { throw .signInRefused("it names no user (sub)") }
    }
}

/// A jwt-kit key collection filled on first use (adding keys to it is asynchronous).
private actor LazyKeys {
    private let keys = JWTKeyCollection()
    private var fill: (@Sendable (JWTKeyCollection) async throws -> Void)?

    init(_ fill: @escaping @Sendable (JWTKeyCollection) async throws -> Void) {
        self.fill = fill
    }

    func collection() async throws -> JWTKeyCollection {
        if let pending = fill {
            try await pending(keys)
            fill = nil
        }
        return keys
    }
}
