import HTTPTypes

/// A frozen router: finds the handler for a request and turns errors into responses.
public final class Responder: Sendable {
    /// What the server should do with a request.
    enum Resolution {
        case respond(Response)
        case run(Handler, Request)
    }

    private let routes: [Router.Route]
    private let middleware: [any Middleware]
    private let scopes: [Router.Scope]
    private let errorRenderer: Router.ErrorRendering

    init(
        routes: [Router.Route], middleware: [any Middleware], scopes: [Router.Scope],
        errorRenderer: @escaping Router.ErrorRendering
    ) {
        self.routes = routes
        self.middleware = middleware
        self.scopes = scopes
        self.errorRenderer = errorRenderer
    }

    /// Every route, as `(method, pattern)` in the order added (`(.get, "/items/:id")`): what a
    /// test walks to check that a rule holds for every route, one added later included.
    public var routeList: [(method: HTTPRequest.Method, pattern: String)] {
        routes.map { ($0.method, $0.pattern.text) }
    }

    /// Answers `request` in this process, as the server answers it from a socket: middleware,
    /// routing, the handler, errors as their pages. What tests go through the router with when the
    /// socket is not what they test. It all runs on the server's handler threads, whose 8 MB stacks
    /// a deeply nested `$filter` needs (a cooperative thread's may be 1 MB), and a handler's own
    /// executor is not used (it only saves thread switches). What libmicrohttpd does around it is
    /// not done: the body size limit (413), `Content-Length`, a HEAD's body left out, and an event
    /// stream's events (its `eventSource` is returned, not run).
    public func respond(to request: Request) async -> Response {
        await withTaskExecutorPreference(HandlerExecutor.shared) {
            switch resolve(request) {
            case .respond(let response):
                return response
            case .run(.sync(let body), let routed):
                return complete(routed) { try body(routed) }
            case .run(.async(let body, _), let routed):
                do { return complete(routed, try await body(routed)) } catch { return complete(routed, error) }
            }
        }
    }

    /// Runs middleware and routing; a response when no handler is needed (or one was refused).
    func resolve(_ incoming: Request) -> Resolution {
        var request = incoming
        do {
            for item in middleware {
                if let early = try item.intercept(&request) { return .respond(complete(request, early)) }
            }
            let handler = try route(&request)
            return .run(handler, request)
        } catch {
            return .respond(complete(request, error))
        }
    }

    /// Runs a synchronous handler body and finishes its response.
    func complete(_ request: Request, _ body: () throws -> Response) -> Response {
        do { return complete(request, try body()) } catch { return complete(request, error) }
    }

    /// Finishes a handler's response: middleware `finish` in reverse order.
    func complete(_ request: Request, _ response: Response) -> Response {
        var response = response
        for item in middleware.reversed() { item.finish(request, &response) }
        return response
    }

    /// Turns an error into its response (rendered as the innermost group whose prefix the path has
    /// renders errors, else as the router does) and finishes it.
    func complete(_ request: Request, _ error: any Error) -> Response {
        let scope = scopes.filter { $0.paths.match(request.pathSegments) != nil }
            .max { $0.paths.components.count < $1.paths.components.count }
        var response = (scope?.errorRenderer ?? errorRenderer)(request, Self.httpError(error))
        if let refused = error as? MethodNotAllowed {
            response.headers[.allow] = refused.allowed.map(\.rawValue).joined(separator: ", ")
        }
        return complete(request, response)
    }

    /// `error` as its answer says it: an unexpected one (logged) as a 500 that says nothing of it.
    static func httpError(_ error: any Error) -> any HTTPResponseError {
        if let answered = error as? any HTTPResponseError { return answered }
        ServerLog.logger.error("unhandled error: \(error)")
        return HTTPError(
            .internalServerError, "The server failed to answer this request. It has been logged; please try again.")
    }

    private func route(_ request: inout Request) throws -> Handler {
        var allowed: [HTTPRequest.Method] = []
        let method = request.method == .head ? HTTPRequest.Method.get : request.method
        for route in routes {
            guard let parameters = route.pattern.match(request.pathSegments) else { continue }
            if route.method == method {
                request.parameters = parameters
                return route.handler
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        guard !allowed.isEmpty else { throw HTTPError.notFound() }
        if allowed.contains(.get) { allowed.append(.head) }
        throw MethodNotAllowed(allowed: allowed)
    }
}

/// 405, carrying the methods that the path does accept (sent as `Allow`).
struct MethodNotAllowed: HTTPResponseError {
    let allowed: [HTTPRequest.Method]
    var status: HTTPResponse.Status { .methodNotAllowed }
    var message: String {
        "This address does not accept that method. It accepts: \(allowed.map(\.rawValue).joined(separator: ", "))."
    }
}
