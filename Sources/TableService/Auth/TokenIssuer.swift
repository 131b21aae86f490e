import Foundation
import JWTKit

/// Signs HS256 tokens as Mobile Apps issues them, for trying a signed-in service locally
/// (`todosync serve --issue-token USER`). A real deployment gets its tokens from its identity
/// provider or App Service authentication.
public enum TokenIssuer {
    /// The shortest HS256 secret accepted: as long as the hash (jwt-kit insists on it).
    public static let minimumSecretLength = 32

    /// A token for `user`, valid from now for `lifetime`, signed with `signIn`'s secret and
    /// carrying its issuer and audience.
    public static func token(
        for user: String, signIn: SignIn, lifetime: Duration = .seconds(24 * 3600), now: Date = Date()
    ) async throws(TableServiceError) -> String {
        guard let secret = signIn.secret, secret.utf8.count >= minimumSecretLength else {
            throw .invalidConfiguration(
                "Issuing a token needs the signing secret (--auth-secret) of at least \(minimumSecretLength) bytes.")
        }
        guard !user.isEmpty else { throw .invalidConfiguration("The user id to issue a token for is empty.") }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let claims = UserClaims(
            sub: SubjectClaim(value: user), iss: IssuerClaim(value: signIn.issuer),
            aud: AudienceClaim(value: [signIn.audience]),
            exp: ExpirationClaim(value: now.addingTimeInterval(Double(lifetime.components.seconds))),
            nbf: NotBeforeClaim(value: now.addingTimeInterval(-1)), iat: IssuedAtClaim(value: now))
        do {
            return try await keys.sign(claims)
        } catch {
            throw .invalidConfiguration("The token could not be signed: \(error)")
        }
    }
}
