import Foundation
import HTTPServer
import Synchronization

/// Who may use a dashboard bound off loopback: the tokens that sign in, the sessions they opened,
/// and the failed attempts of each address.
///
/// A token is either standing (`--access-token-file`: signs in as often as needed) or a one-time
/// link's (printed at start, or made on the Settings page: it signs in once, within a day). A
/// session is a random id in an HttpOnly cookie that expires after ``sessionLifetime``.
public final class SignInSessions: Sendable {
    /// The cookie that carries the session id.
    static let cookieName = "todosync_access"
    /// How long a session lasts.
    let sessionLifetime: TimeInterval
    /// How long a one-time link may wait for its use.
    static let linkLifetime: TimeInterval = 24 * 3600
    /// Sessions kept at most; beyond, the one closest to its end goes.
    static let maximumSessions = 10_000
    let now: @Sendable () -> Date
    /// Random per process: the dashboard's own sync client sends it (as its application key) to
    /// the embedded service's `/tables`, which no one else reaches without a session.
    let embeddedKey = CSRFProtection.randomToken()

    private struct Grant {
        var role: AccessRole
        var expires: Date
    }

    private struct State {
        var standing: [String: AccessRole]
        var links: [String: Grant] = [:]
        var sessions: [String: Grant] = [:]
        var attempts = SignInAttempts()
    }

    private let state: Mutex<State>

    /// The result of a sign-in attempt.
    enum Outcome: Equatable {
        /// Signed in: the new session's id and its role.
        case signedIn(session: String, role: AccessRole)
        /// Not a token that signs in (never says more: no hint whether it ever was one).
        case refused
        /// Too many failures from this address: try again after this many seconds.
        case tooManyAttempts(retryAfter: Int)
    }

    init(
        standing: [String: AccessRole], sessionLifetime: TimeInterval = 12 * 3600,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        state = Mutex(State(standing: standing))
        self.sessionLifetime = sessionLifetime
        self.now = now
    }

    /// A new one-time sign-in token for `role`.
    func makeLink(for role: AccessRole) -> String {
        let token = CSRFProtection.randomToken()
        let expires = now().addingTimeInterval(Self.linkLifetime)
        state.withLock { $0.links[token] = Grant(role: role, expires: expires) }
        return token
    }

    /// Signs in with `token` from `address`: a session for its role, or a refusal.
    func signIn(token: String, from address: String) -> Outcome {
        let now = now()
        return state.withLock { state in
            if let wait = state.attempts.wait(for: address, now: now) {
                return .tooManyAttempts(retryAfter: Int(wait.rounded(.up)))
            }
            state.links = state.links.filter { $0.value.expires > now }
            // Every candidate is compared in full, so the time taken says nothing about which matched.
            var role: AccessRole?
            var link: String?
            for (candidate, standingRole) in state.standing where CSRFProtection.constantTimeEquals(token, candidate) {
                role = standingRole
            }
            for (candidate, grant) in state.links where CSRFProtection.constantTimeEquals(token, candidate) {
                role = grant.role
                link = candidate
            }
            guard let role else {
                state.attempts.failed(address, now: now)
                return .refused
            }
            if let link { state.links[link] = nil }
            let id = CSRFProtection.randomToken()
            if state.sessions.count >= Self.maximumSessions {
                state.sessions = state.sessions.filter { $0.value.expires > now }
                if state.sessions.count >= Self.maximumSessions,
                    let first = state.sessions.min(by: { $0.value.expires < $1.value.expires })
                {
                    state.sessions[first.key] = nil
                }
            }
            state.sessions[id] = Grant(role: role, expires: now.addingTimeInterval(sessionLifetime))
            return .signedIn(session: id, role: role)
        }
    }

    /// The role of the session `id`; nil when there is none or it expired.
    func role(ofSession id: String) -> AccessRole? {
        let now = now()
        return state.withLock { state in
            guard let grant = state.sessions[id] else { return nil }
            guard grant.expires > now else {
                state.sessions[id] = nil
                return nil
            }
            return grant.role
        }
    }

    /// Ends the session `id` (signing out).
    func end(session id: String) {
        _ = state.withLock { $0.sessions.removeValue(forKey: id) }
    }

    /// Ends every session and every unused link; standing tokens still sign in.
    func endAll() {
        state.withLock { state in
            state.sessions = [:]
            state.links = [:]
        }
    }

    /// Sessions open now.
    var openSessions: Int {
        let now = now()
        return state.withLock { $0.sessions.values.count { $0.expires > now } }
    }

    /// The `Set-Cookie` value opening session `id` (`Secure` when the dashboard speaks HTTPS).
    func cookie(opening id: String, secure: Bool) -> String {
        "\(Self.cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(sessionLifetime))"
            + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that removes the session cookie.
    static let clearingCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
}
