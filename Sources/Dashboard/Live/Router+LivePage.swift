import HTTPServer
import HTTPTypes

extension Router {
    /// A page that follows the store. `GET pattern` answers the page; the page's script opens an
    /// `EventSource` on the same address (so with the same query, and `Accept: text/event-stream`)
    /// and gets the page's `fragments` as the store changes (see ``LiveUpdates``). With JavaScript
    /// off nothing asks for the stream and the page is as it always was.
    mutating func getLive(
        _ pattern: String, updates: LiveUpdates, page: @escaping @Sendable (Request) throws -> Response,
        fragments: @escaping @Sendable (Request) throws -> [LiveFragment]
    ) {
        get(pattern) { request in
            guard request.asksForEventStream else {
                var response = try page(request)
                response.headers[.vary] = "Accept"
                return response
            }
            return try updates.stream { try fragments(request) }
        }
    }

    /// A page that follows the store and is one template: `GET pattern` renders `template` from
    /// `content(request)`, and its live fragments are the header's counts and `partials`, rendered
    /// from the same content (see ``PageRenderer/fragments(_:_:section:_:)``).
    mutating func getLive<Content: Encodable & Sendable>(
        _ pattern: String, _ environment: DashboardEnvironment, template: String, partials: [String],
        section: Navigation.Section, content: @escaping @Sendable (Request) throws -> Content
    ) {
        getLive(pattern, updates: environment.live) { request in
            environment.renderer.page(template, request, section: section, try content(request))
        } fragments: { request in
            environment.renderer.fragments(partials, request, section: section, try content(request))
        }
    }
}

extension Request {
    /// Whether an `EventSource` sent it (`Accept: text/event-stream`).
    var asksForEventStream: Bool {
        headers[.accept]?.contains("text/event-stream") == true
    }
}
