/// Everything one page of the service shows: what its header needs on every page, around the
/// page's own typed content (which the templates read inside `{{#page}}…{{/page}}`).
struct ServicePageView<Content: Encodable & Sendable>: Encodable, Sendable {
    /// Where the pages are served (`/service`), for links and forms.
    var base: String
    /// The CSRF token every form posts back.
    var csrf: String
    /// The window title.
    var title: String
    /// A message about the last action, or why the page could not be shown.
    var flash: ServiceFlash?
    /// The page's own content.
    var page: Content
}

/// A message shown once at the top of a page.
struct ServiceFlash: Encodable, Sendable, Equatable {
    /// How the message is styled.
    enum Kind: String, Encodable, Sendable { case ok, error }

    var kind: Kind
    var message: String

    /// A message about something that went wrong.
    static func error(_ message: String) -> ServiceFlash { ServiceFlash(kind: .error, message: message) }
}

/// The content of a page that shows nothing of the tables (the application-key form, the style sheet).
struct NoServiceContent: Encodable, Sendable {}
