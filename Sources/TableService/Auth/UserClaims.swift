import Foundation
import JWTKit

/// The claims of a Mobile Apps token that the service reads: `sub` (the user), `iss`, `aud`,
/// `exp` and `nbf`. They are checked by ``TokenVerifier`` (which knows the configured values and
/// the leeway), not by jwt-kit's `verify(using:)`.
struct UserClaims: JWTPayload {
    var sub: SubjectClaim
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
