/// Something a test starts and must stop before it ends: a service, a dashboard, a proxy. Its
/// ``stop()`` lets work in progress end and gives back the port and files.
///
/// A test never stops one from a `defer`, which cannot wait: it runs its steps inside a scope
/// (``withStopping(_:isolation:_:)``, or a helper named after the type, such as
/// ``withMisbehavingService(answering:_:)``), which waits for the stop.
public protocol Stoppable: Sendable {
    /// Stops it and returns once it has stopped.
    func stop() async
}

/// Runs `body` with `resource`, then stops the resource and waits until it has stopped, also when
/// `body` throws, and then rethrows the error.
///
/// The resource is started by the argument, before the scope begins:
///
/// ```swift
/// try await withStopping(TestService.sqlite(in: folder)) { service in
///     ...
/// }
/// ```
///
/// So the next test never meets a server still shutting down, and a stop that hangs holds its
/// test instead of going unseen.
public func withStopping<Resource: Stoppable>(
    _ resource: Resource, isolation: isolated (any Actor)? = #isolation,
    _ body: (Resource) async throws -> Void
) async rethrows {
    do {
        try await body(resource)
    } catch {
        await resource.stop()
        throw error
    }
    await resource.stop()
}
