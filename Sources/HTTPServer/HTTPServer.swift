internal import CMicroHTTPD
internal import CMicroHTTPDShim
import Foundation
import HTTPTypes
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: an internal epoll thread pool, keep-alive, bodies read in
/// full (up to a limit) before the ``Responder`` runs, asynchronous handlers on suspended connections.
///
/// This module is the only one that talks to libmicrohttpd: the daemon starts in `init` and runs
/// until ``stop()`` (or deinit); its callbacks (`AccessHandler.swift`, `EventStreamResponse.swift`)
/// hand requests to the responder on the daemon's threads.
public final class HTTPServer: Sendable {
    /// Where and how to listen.
    public struct Configuration: Sendable {
        /// An IPv4 or IPv6 literal; loopback unless told otherwise.
        public var host: String
        /// 0 asks the system for a free port; read the real one from ``HTTPServer/port``.
        public var port: Int
        /// Threads answering requests (values below 2 mean one polling thread for all).
        public var threadPoolSize: Int
        /// Largest request body accepted; larger ones are answered 413.
        public var maxBodySize: Int
        /// Seconds an idle connection is kept open.
        public var connectionTimeout: Int
        public var connectionLimit: Int
        /// How often every open event stream gets a heartbeat comment.
        public var heartbeatInterval: Duration
        /// Speaks HTTPS with this certificate and key; plain HTTP without.
        public var tls: TLSIdentity?

        public init(
            host: String = "127.0.0.1", port: Int = 0,
            threadPoolSize: Int = max(2, ProcessInfo.processInfo.activeProcessorCount),
            maxBodySize: Int = 1 << 20, connectionTimeout: Int = 30, connectionLimit: Int = 1000,
            heartbeatInterval: Duration = .seconds(15)
        ) {
            self.heartbeatInterval = heartbeatInterval
            self.host = host
            self.port = port
            self.threadPoolSize = threadPoolSize
            self.maxBodySize = maxBodySize
            self.connectionTimeout = connectionTimeout
            self.connectionLimit = connectionLimit
        }
    }

    /// The address the server is bound to.
    public let host: String
    /// The port the server is bound to (the real one when started on port 0).
    public let port: Int
    private let daemon: Mutex<DaemonHandle?>
    private let context: ServerContext

    /// Binds and starts serving at once.
    public init(configuration: Configuration = .init(), responder: Responder) throws(HTTPServerError) {
        guard (0...65535).contains(configuration.port) else { throw .invalidPort(configuration.port) }
        let context = ServerContext(
            responder: responder, maxBodySize: configuration.maxBodySize,
            streams: OpenStreams(heartbeatEvery: configuration.heartbeatInterval),
            tls: configuration.tls.map { DaemonStrings([$0.certificate, $0.key]) })
        var failure: Int32 = 0
        let opaque = Unmanaged.passUnretained(context).toOpaque()
        let started = todosync_mhd_start(
            configuration.host, UInt16(configuration.port), UInt32(max(0, configuration.threadPoolSize)),
            UInt32(max(1, configuration.connectionTimeout)), UInt32(max(1, configuration.connectionLimit)),
            accessHandler, opaque, requestCompleted, opaque, context.tls?.pointers[0], context.tls?.pointers[1],
            &failure)
        guard let started else {
            switch failure {
            case -1: throw .invalidHost(configuration.host)
            case -2: throw .noTLS
            default:
                throw configuration.tls == nil
                    ? .cannotBind(host: configuration.host, port: configuration.port)
                    : .cannotStartTLS(host: configuration.host, port: configuration.port)
            }
        }
        scheme = configuration.tls == nil ? "http" : "https"
        self.context = context
        self.host = configuration.host
        self.port = Int(todosync_mhd_bound_port(started))
        self.daemon = Mutex(DaemonHandle(pointer: started))
    }

    /// The routes this server answers (see ``Responder/routeList``).
    public var routeList: [(method: HTTPRequest.Method, pattern: String)] { context.responder.routeList }

    /// What answers the requests: ``Responder/respond(to:)`` answers one in process.
    public var responder: Responder { context.responder }

    /// `https` when it speaks TLS, else `http`.
    public let scheme: String

    /// The base URL, such as `http://127.0.0.1:8080` (IPv6 hosts in brackets).
    public var url: String {
        host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }

    /// Whether ``stop(grace:)`` has begun: no connection is accepted any more.
    public var isStopping: Bool { daemon.withLock { $0 == nil } }

    /// Stops accepting connections, lets running asynchronous handlers finish and their
    /// connections come back (for up to `grace`), then stops the daemon. Safe to call more than once.
    ///
    /// It waits without holding a thread: blocking on the cooperative pool (two threads on a 2-core
    /// machine) could starve the very handlers being waited for. Cancelling the caller does not
    /// shorten the wait: stopping with a parked connection would abort the process.
    public func stop(grace: Duration = .seconds(60)) async {
        guard let handle = quiesce() else { return }
        let parked = context.parked
        // Unstructured, so that the caller's cancel does not reach the wait (see above).
        await Task { await parked.none(deadline: .now + grace) }.value
        MHD_stop_daemon(handle.pointer)
    }

    /// Takes the daemon (nil when already stopped), closes its listening socket and finishes every
    /// event stream, telling its reader to reconnect in a few seconds (to another instance, or this
    /// one restarted).
    private func quiesce() -> DaemonHandle? {
        let taken = daemon.withLock { value -> DaemonHandle? in
            defer { value = nil }
            return value
        }
        guard let handle = taken else { return nil }
        // Quiescing hands the listening socket back to us: close it so no one can connect.
        let listening = MHD_quiesce_daemon(handle.pointer)
        if listening >= 0 { close(listening) }
        context.streams.finishAll(retryAfter: .seconds(2))
        return handle
    }

    /// Event streams open now.
    public var openEventStreams: Int { context.streams.count }

    /// A server dropped without ``stop(grace:)`` stops on a thread of its own: a deinit may run on a
    /// cooperative thread, which must not wait there for the handlers it may be starving. That
    /// thread keeps the context alive until the daemon is gone: libmicrohttpd's threads hold it
    /// unretained, and go on answering the connections still open until then.
    deinit {
        guard let handle = quiesce() else { return }
        let context = context
        Thread.detachNewThread {
            context.parked.waitUntilNone(deadline: .now + .seconds(60))
            MHD_stop_daemon(handle.pointer)
            withExtendedLifetime(context) {}
        }
    }
}
