/// What an ``Interceptor`` decides for one request, instead of the plan's fault.
public enum Interception: Sendable {
    /// Send this answer to the client (from ``ProxyUpstream/forward(_:)``, changed or not, or made up).
    case answer(ProxiedResponse)
    /// Answer nothing and keep the connection open until the client closes it: an answer lost on
    /// its way, which the client waits for until its own deadline gives up.
    case withhold
    /// Close the connection without answering.
    case hangUp
}

/// A test's hook on every request that reaches a ``FaultProxy``: it may wait for an event, run
/// code while the request is on the wire, forward the request (changed or not) with `upstream`,
/// and decide what the client gets. It returns nil to let the plan's fault apply as usual (the
/// request has not been forwarded yet then, unless the interceptor forwarded it itself).
///
/// It runs as a task of its own for each request, so it may wait without holding up other
/// connections. An error it throws is answered with a 502.
///
/// ```swift
/// proxy.intercept { request, upstream in
///     guard request.method == "POST" else { return nil }
///     _ = try await upstream.forward(request)   // the service applies the insert...
///     return .withhold                          // ...and the client never hears of it
/// }
/// ```
public typealias Interceptor = @Sendable (ProxiedRequest, ProxyUpstream) async throws -> Interception?

/// The service behind a proxy, for an ``Interceptor``.
public struct ProxyUpstream: Sendable {
    let forwarder: UpstreamForwarder

    /// Sends `request` to the service on a connection of its own and returns the whole answer.
    public func forward(_ request: ProxiedRequest) async throws -> ProxiedResponse {
        try await forwarder.send(request).get()
    }
}
