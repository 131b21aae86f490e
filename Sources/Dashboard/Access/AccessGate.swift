import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// Asks who you are on a dashboard bound off loopback: every request but the sign-in page and
/// the static files needs a session (pages are sent to sign in, everything else gets 401), and a
/// viewer's state-changing requests get 403. Runs before routing, so no route can be forgotten.
struct AccessGate: Middleware {
    let sessions: SignInSessions
    /// The request attribute holding the signed-in role.
    static let roleAttribute = "accessRole"
    /// The request attribute holding the session id.
    static let sessionAttribute = "accessSession"

    func intercept(_ request: inout Request) throws -> Response? {
        if request.path == SignInController.path || request.path.hasPrefix("/public/") { return nil }
        // The dashboard's own sync client, reaching the embedded service.
        if request.path.hasPrefix("/tables"), let key = request.headers[ProtocolHeader.applicationKey],
            CSRFProtection.constantTimeEquals(key, sessions.embeddedKey)
        {
            return nil
        }
        guard let id = request.cookies[SignInSessions.cookieName], let role = sessions.role(ofSession: id) else {
            return Self.askWhoYouAre(request)
        }
        request.attributes[Self.roleAttribute] = role.rawValue
        request.attributes[Self.sessionAttribute] = id
        if role == .viewer, ![.get, .head, .options].contains(request.method), request.path != SignInController.signOut
        {
            throw HTTPError(
                .forbidden,
                "You are signed in as a viewer: you can read everything and change nothing. "
                    + "Ask an operator for an operator's sign-in link.")
        }
        return nil
    }

    /// A page is sent to the sign-in page (and back afterwards); anything else gets 401.
    static func askWhoYouAre(_ request: Request) -> Response {
        let isPage =
            [.get, .head].contains(request.method) && !request.prefersJSON
            && !["/api/", "/tables", "/metrics"].contains { request.path.hasPrefix($0) }
            && request.headers[.accept]?.contains("text/event-stream") != true
        guard isPage else {
            return .jsonError(
                "Sign in first: open the sign-in link todosync printed at start, or ask an operator for one.",
                status: .unauthorized)
        }
        var target = request.path
        if !request.queryItems.isEmpty {
            target +=
                "?"
                + request.queryItems.map { PercentDecoding.encode($0.name) + "=" + PercentDecoding.encode($0.value) }
                .joined(separator: "&")
        }
        return .redirect(to: SignInController.path + "?next=" + PercentDecoding.encode(target))
    }
}

extension Request {
    /// The signed-in role, when the dashboard asks who you are; nil on loopback.
    var accessRole: AccessRole? { attributes[AccessGate.roleAttribute].flatMap(AccessRole.init(rawValue:)) }
}
