import Foundation
import HTTPServer
import HTTPTypes
import Views

/// `/sign-in`, `/sign-out` and the Access section of Settings (one-time links, ending every
/// session), on a dashboard that asks who you are.
struct SignInController: Sendable {
    static let path = "/sign-in"
    static let signOut = "/sign-out"

    let access: SignInSessions
    let templates: TemplateLibrary
    let flashes: Sessions
    /// Whether the dashboard speaks HTTPS (the cookie is then `Secure`).
    let secure: Bool
    /// Where a browser opens this dashboard (`http://192.0.2.7:8080`), for the links made here.
    let browserURL: @Sendable () -> String

    /// Adds the sign-in page and its form, which need no CSRF token (the sign-in token is the
    /// stronger proof, and a browser that has not signed in has no page to take one from).
    func addSignIn(to router: inout Router) {
        router.get(Self.path) { request in
            page(SignInPage(token: request.query("token") ?? "", next: Self.safeNext(request.query("next"))))
        }
        router.post(Self.path) { request in try signIn(request) }
    }

    /// Adds signing out and the access settings (among the pages: a CSRF token needed).
    func addRoutes(to router: inout Router) {
        router.post(Self.signOut) { request in
            if let id = request.attributes[AccessGate.sessionAttribute] { access.end(session: id) }
            return Self.signedOut()
        }
        router.post("/settings/access/link") { request in try makeLink(request) }
        router.post("/settings/access/end") { _ in
            access.endAll()
            return Self.signedOut()
        }
    }

    /// Back to the sign-in page, the browser's session cookie cleared.
    private static func signedOut() -> Response {
        var response = Response.redirect(to: path)
        response.headers.append(HTTPField(name: .setCookie, value: SignInSessions.clearingCookie))
        return response
    }

    private func signIn(_ request: Request) throws -> Response {
        // A page of another site may not sign a browser in (the token proves the rest).
        if let origin = request.headers[.origin], let host = request.authority,
            URL(string: origin).map({ Self.authority(of: $0) }) != host.lowercased()
        {
            throw HTTPError(.forbidden, "This sign-in did not come from this dashboard's own page.")
        }
        let form = try request.form()
        let next = Self.safeNext(form["next"])
        switch access.signIn(token: form["token"] ?? "", from: request.clientAddress ?? "unknown") {
        case .signedIn(let session, _):
            var response = Response.redirect(to: next)
            response.headers.append(
                HTTPField(name: .setCookie, value: access.cookie(opening: session, secure: secure)))
            return response
        case .refused:
            return page(
                SignInPage(
                    token: "", next: next,
                    error: "That token does not sign in. A one-time link works once, within a day of being made: "
                        + "ask an operator for a new one."),
                status: .unauthorized)
        case .tooManyAttempts(let seconds):
            var response = page(
                SignInPage(
                    token: "", next: next,
                    error: "Too many failed sign-ins from your address. Try again in \(seconds) s."),
                status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    private func makeLink(_ request: Request) throws -> Response {
        guard let role = AccessRole(rawValue: try request.form()["role"] ?? "") else {
            throw HTTPError(.unprocessableContent, "Choose the role the link signs in as: viewer or operator.")
        }
        let link = browserURL() + Self.path + "?token=" + access.makeLink(for: role)
        flashes.flash(
            request, .success, "A one-time sign-in link for a \(role.rawValue) (it works once, within a day): \(link)")
        // Not to #access: the link is in the flash message at the top of the page.
        return .redirect(to: "/settings")
    }

    private func page(_ content: SignInPage, status: HTTPResponse.Status = .ok) -> Response {
        templates.page("sign-in", content, status: status)
    }

    /// Where to go after signing in: a path of this dashboard, never another site (nor back here).
    static func safeNext(_ next: String?) -> String {
        let next = DashboardEnvironment.safeBack(next)
        return next.hasPrefix(path) ? "/" : next
    }

    /// `host:port` of a URL as a `Host` header names it.
    private static func authority(of url: URL) -> String {
        let host = (url.host ?? "").lowercased()
        let named = host.contains(":") ? "[\(host)]" : host
        return url.port.map { "\(named):\($0)" } ?? named
    }
}

/// The sign-in page: the token field (filled from a link), where to go next, and why the last
/// attempt failed.
struct SignInPage: Encodable, Sendable {
    var token: String
    var next: String
    var error: String?
}
