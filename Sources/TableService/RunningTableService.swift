import HTTPServer
import ServiceLifecycle

/// A table service with its own HTTP server, as started by
/// ``TableService/start(_:host:port:quiet:allowedHosts:logger:)``.
public struct RunningTableService: Sendable {
    public let service: TableService
    public let server: HTTPServer

    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public var url: String { server.url }
    /// The bound port (the real one when started on port 0).
    public var port: Int { server.port }

    /// Stops the server, waiting for requests in progress without holding a thread, saves the
    /// installations noted since the last save, then closes the database.
    public func stop() async {
        service.endSubscriptions()
        await server.stop()
        await service.saveInstallations()
        service.close()
    }
}

extension RunningTableService: Service {
    /// Serves until a graceful shutdown (SIGINT or SIGTERM in a `ServiceGroup`), then stops.
    public func run() async {
        try? await gracefulShutdown()
        await stop()
    }
}
