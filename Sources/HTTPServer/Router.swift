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
    }

    private(set) var routes: [Route] = []
    private(set) var middleware: [any Middleware] = []
    /// Renders the response for a thrown error (the default answers JSON or a small HTML page).
    public var errorRenderer: @Sendable (Request, any HTTPResponseError) -> Response = ErrorRenderer.standard

    public init() {}

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
        Responder(routes: routes, middleware: middleware, errorRenderer: errorRenderer)
    }
}
