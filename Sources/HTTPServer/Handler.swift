/// The code that answers a request: synchronous handlers run on the server's own threads (where
/// blocking on SQLite is fine); asynchronous ones start there too, and park the connection if they
/// suspend, until they finish.
public enum Handler: Sendable {
    case sync(@Sendable (Request) throws -> Response)
    /// After its first suspension the handler goes on on `executor` when given: the one the
    /// answers it awaits arrive on (a database client's event loop), so that it finishes there
    /// instead of crossing to another thread at each answer; else on the server's handler threads.
    case async(@Sendable (Request) async throws -> Response, on: (any TaskExecutor)? = nil)
}

/// Code that runs around every request: before routing it may answer early (a refused `Host`,
/// a missing CSRF token), and after the handler it may amend any response (security headers, logs).
public protocol Middleware: Sendable {
    /// Looks at (and may amend) the request; a returned response answers it without routing.
    func intercept(_ request: inout Request) throws -> Response?
    /// Amends the response about to be sent, error responses included.
    func finish(_ request: Request, _ response: inout Response)
}

extension Middleware {
    public func intercept(_ request: inout Request) throws -> Response? { nil }
    public func finish(_ request: Request, _ response: inout Response) {}
}
