import ArgumentParser
import Foundation
import TableService

/// `--auth-secret`, `--auth-jwks`, `--auth-issuer`, `--auth-audience`, `--require-auth`, `--per-user`:
/// signed-in users of a table service (`serve`, `demo`).
struct SignInOptions: ParsableArguments {
    @Option(help: "Accept HS256 tokens (X-ZUMO-AUTH) signed with this secret, as Mobile Apps issues them.")
    var authSecret: String?

    @Option(help: ArgumentHelp("Accept RS256/ES256 tokens signed by the keys of this JWKS file.", valueName: "path"))
    var authJwks: String?

    @Option(help: "The issuer (iss) tokens must carry.")
    var authIssuer = SignIn.mobileAppsIdentity

    @Option(help: "The audience (aud) tokens must name.")
    var authAudience = SignIn.mobileAppsIdentity

    @Flag(help: "Every table request needs a valid token (401 otherwise).")
    var requireAuth = false

    @Option(
        name: .customLong("per-user"),
        help: ArgumentHelp(
            "Keep each user's rows of this table apart (repeatable): users see and change only their own.",
            valueName: "table"))
    var perUserTables: [String] = []

    func validate() throws {
        if authSecret == nil, authJwks == nil, requireAuth || !perUserTables.isEmpty {
            throw ValidationError(
                "--require-auth and --per-user need a way to check tokens: give --auth-secret or --auth-jwks.")
        }
        if let authSecret, authSecret.utf8.count < 32 {
            throw ValidationError(
                "--auth-secret is too short for HS256; use at least 32 random characters (e.g. openssl rand -hex 32).")
        }
        for table in perUserTables where !TableService.isValidTableName(table) {
            throw ValidationError("--per-user '\(table)' is not a table name.")
        }
    }

    /// The service's sign-in configuration; nil when no key is given.
    func signIn() throws -> SignIn? {
        guard authSecret != nil || authJwks != nil else { return nil }
        var jwks: String?
        if let authJwks {
            do {
                jwks = try String(contentsOfFile: authJwks, encoding: .utf8)
            } catch {
                throw ValidationError("--auth-jwks '\(authJwks)' cannot be read; give the path of a JWKS file.")
            }
        }
        return SignIn(
            secret: authSecret, jwks: jwks, issuer: authIssuer, audience: authAudience, required: requireAuth,
            perUserTables: perUserTables)
    }
}
