import Foundation

/// How a table service checks signed-in users' tokens (`X-ZUMO-AUTH: <JWT>`), as Mobile Apps does.
///
/// Tokens are checked with jwt-kit: HS256 with the site's signing secret (what Mobile Apps issues),
/// or RS256/ES256 with the public keys of an identity provider (a JWKS file). The user is the
/// token's `sub`; `iss` and `aud` must be the configured ones, and `exp` (required) and `nbf` are
/// checked with a small leeway for clock skew.
public struct SignIn: Sendable {
    /// Mobile Apps' issuer and audience: `urn:microsoft:windows-azure:zumo`.
    public static let mobileAppsIdentity = "urn:microsoft:windows-azure:zumo"

    /// The HS256 signing secret, if tokens signed with it are accepted.
    public var secret: String?
    /// The text of a JWKS (`{"keys": [...]}`) whose RS256/ES256 keys are accepted.
    public var jwks: String?
    /// The `iss` tokens must carry.
    public var issuer: String
    /// A value the token's `aud` must include.
    public var audience: String
    /// Clock skew tolerated on `exp` and `nbf`.
    public var leeway: Duration
    /// Every table request needs a valid token (401 otherwise); without it only per-user tables do.
    public var required: Bool
    /// Tables whose rows belong to the user who inserted them (any letter case).
    public var perUserTables: [String]

    /// A sign-in configuration; give a secret, a JWKS or both.
    public init(
        secret: String? = nil, jwks: String? = nil, issuer: String = SignIn.mobileAppsIdentity,
        audience: String = SignIn.mobileAppsIdentity, leeway: Duration = .seconds(60), required: Bool = false,
        perUserTables: [String] = []
    ) {
        self.secret = secret
        self.jwks = jwks
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.required = required
        self.perUserTables = perUserTables
    }

    /// Whether rows of `table` belong to their users.
    func isPerUser(_ table: String) -> Bool {
        perUserTables.contains { $0.lowercased() == table.lowercased() }
    }
}
