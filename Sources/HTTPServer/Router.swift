import HTTPTypes

/// Collects routes and middleware, then freezes into a ``Responder`` for ``HTTPServer``.
///
/// ```swift
/// var router = Router()
/// router.get("/items/:id") { request in .html(...) }
/// router.post("/sync") { request async throws in ... }
/// let server = try HTTPServer(configuration: .init(port: 0), responder: router.buildResponder())
/// ```
public struct Router: Sendable {
    struct Route: Sendable {
        let method: HTTPRequest.Method
        let pattern: RoutePattern
        let handler: Handler
        /// Its groups' middleware, outermost first.
        var middleware: [any Middleware] = []
        /// Its innermost group's renderer, if one has its own.
        var errorRenderer: ErrorRendering?
    }

    /// Renders the response for an error.
    public typealias ErrorRendering = @Sendable (Request, any HTTPResponseError) -> Response

    /// Where a group's routes are, and how their routing errors (404, 405) are rendered.
    struct Scope: Sendable {
        let paths: RoutePattern
        let errorRenderer: ErrorRendering
    }

    private(set) var routes: [Route] = []
    private(set) var middleware: [any Middleware] = []
    /// The groups with an error renderer of their own.
    private(set) var scopes: [Scope] = []
    private var renderer: ErrorRendering?

    /// Renders the response for a thrown error (the default answers JSON or a small HTML page). In a
    /// group (see ``group(_:_:)``), renders its routes' errors and the routing errors under its prefix.
    public var errorRenderer: ErrorRendering {
        get { renderer ?? ErrorRenderer.standard }
        set { renderer = newValue }
    }

    public init() {}

    /// Adds the routes `build` adds, each under `prefix`, as a group: the middleware `build` gives
    /// to ``use(_:)`` runs for them alone, once one is found (after the router's own, which runs
    /// for every request), and the ``errorRenderer`` `build` sets renders their errors, and the
    /// 404 and 405 of any path under `prefix`. Groups nest.
    ///
    /// ```swift
    /// router.group("/api") { api in
    ///     api.use(csrf)
    ///     api.errorRenderer = { _, error in .jsonError(error.message, status: error.status) }
    ///     api.get("/status") { request in ... }
    /// }
    /// ```
    public mutating func group(_ prefix: String = "", _ build: (inout Router) throws -> Void) rethrows {
        var group = Router()
        try build(&group)
        for route in group.routes {
            routes.append(
                Route(
                    method: route.method, pattern: RoutePattern(prefix + route.pattern.text), handler: route.handler,
                    middleware: group.middleware + route.middleware,
                    errorRenderer: route.errorRenderer ?? group.renderer))
        }
        for scope in group.scopes {
            scopes.append(Scope(paths: RoutePattern(prefix + scope.paths.text), errorRenderer: scope.errorRenderer))
        }
        if let renderer = group.renderer {
            scopes.append(Scope(paths: RoutePattern(prefix + "/*"), errorRenderer: renderer))
        }
    }

    /// Adds a route answered by `handler` for `method` on paths matching `pattern`.
    public mutating func on(_ method: HTTPRequest.Method, _ pattern: String, _ handler: Handler) {
        routes.append(Route(method: method, pattern: RoutePattern(pattern), handler: handler))
    }

    /// Adds middleware; it runs in the order added, and its `finish` in reverse order.
    public mutating func use(_ middleware: any Middleware) {
        self.middleware.append(middleware)
    }

    // The verbs the servers use, each with a handler that runs on the server's thread and, where
    // one is needed, one that awaits; ``on(_:_:_:)`` takes any other.
    public mutating func get(_ pattern: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.get, pattern, .sync(handler))
    }
    public mutating func get(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.get, pattern, .async(handler))
    }
    public mutating func post(_ pattern: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.post, pattern, .sync(handler))
    }
    public mutating func post(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.post, pattern, .async(handler))
    }
    public mutating func patch(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.patch, pattern, .async(handler))
    }
    public mutating func delete(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        on(.delete, pattern, .async(handler))
    }
    public mutating func options(_ pattern: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        on(.options, pattern, .sync(handler))
    }

    /// The immutable responder the server runs.
    public func buildResponder() -> Responder {
        let routes = routes.map { route in
            guard !route.middleware.isEmpty || route.errorRenderer != nil else { return route }
            return Route(
                method: route.method, pattern: route.pattern,
                handler: route.handler.wrapped(
                    in: route.middleware, errorRenderer: route.errorRenderer ?? errorRenderer))
        }
        return Responder(routes: routes, middleware: middleware, scopes: scopes, errorRenderer: errorRenderer)
    }
}
