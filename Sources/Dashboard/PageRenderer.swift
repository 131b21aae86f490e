import Foundation
import HTTPServer
import HTTPTypes
import Views

/// Renders dashboard pages: a page's typed content inside a ``PageView`` with what the layout
/// needs on every page (CSRF token, header, flash messages, current navigation item), as HTML
/// through the page's template. Pages answer HTML only: the JSON surface is `/api/...`.
struct PageRenderer: Sendable {
    let templates: TemplateLibrary
    let csrfToken: String
    let sessions: Sessions
    /// Shown in the header and the window title ("Device A" in the demo).
    let deviceName: String?
    let header: @Sendable () -> HeaderView

    func page<Content: Encodable & Sendable>(
        _ template: String, _ request: Request, section: Navigation.Section, status: HTTPResponse.Status = .ok,
        _ content: Content
    ) -> Response {
        let view = PageView(
            csrf: csrfToken, header: header(), nav: Navigation(section), back: request.path, device: deviceName,
            flash: sessions.takeFlashes(request), signedIn: request.accessRole?.rawValue, page: content)
        return templates.page(template, view, status: status)
    }

    /// The error page, with a status and advice.
    func error(_ request: Request, _ error: any HTTPResponseError) -> Response {
        page(
            "error", request, section: .none, status: error.status,
            ErrorPage(status: error.status.code, reason: error.status.reasonPhrase, message: error.message))
    }
}

/// The error page's content: the status, its reason phrase and what the user can do.
struct ErrorPage: Encodable, Sendable {
    var status: Int
    var reason: String
    var message: String
}
