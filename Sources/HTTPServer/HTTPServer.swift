internal import CMicroHTTPD
internal import CMicroHTTPDShim
import Foundation
import HTTPTypes
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: an internal epoll thread pool, keep-alive, bodies read in
/// full (up to a limit) before the ``Responder`` runs, asynchronous handlers on suspended connections.
///
/// This file is the only one that talks to libmicrohttpd. The daemon starts in `init` and runs
/// until ``stop()`` (or deinit); requests go to the responder on the daemon's threads.
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

    /// `https` when it speaks TLS, else `http`.
    public let scheme: String

    /// The base URL, such as `http://127.0.0.1:8080` (IPv6 hosts in brackets).
    public var url: String {
        host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }

    /// Stops accepting connections, lets running asynchronous handlers finish and their
    /// connections come back (for up to `grace`), then stops the daemon. Safe to call more than once.
    ///
    /// It waits without holding a thread: blocking on the cooperative pool (two threads on a 2-core
    /// machine) could starve the very handlers being waited for. Cancelling the caller does not
    /// shorten the wait: stopping with a parked connection would abort the process.
    public func stop(grace: Duration = .seconds(60)) async {
        guard let handle = quiesce() else { return }
        let parked = context.parked
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

/// Why a server could not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    case invalidHost(String)
    case invalidPort(Int)
    case cannotBind(host: String, port: Int)
    /// The certificate or key is not one libmicrohttpd can use (or the port is taken).
    case cannotStartTLS(host: String, port: Int)
    /// This libmicrohttpd was built without TLS.
    case noTLS
    /// `--tls-cert` or `--tls-key` names a file that cannot serve.
    case unusableTLSFile(option: String, path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidHost(let host):
            "'\(host)' is not an IP address to listen on; give an IPv4 or IPv6 literal such as 127.0.0.1."
        case .invalidPort(let port): "Port \(port) is out of range; use 0 to 65535."
        case .cannotBind(let host, let port):
            "Cannot listen on \(host):\(port): the port is probably in use. Stop the other program or pick another port."
        case .cannotStartTLS(let host, let port):
            "Cannot serve HTTPS on \(host):\(port): the port is in use, or --tls-cert and --tls-key are not a "
                + "certificate and its unencrypted private key in PEM."
        case .noTLS:
            "This libmicrohttpd was built without TLS; install Debian's libmicrohttpd12 (it links GnuTLS)."
        case .unusableTLSFile(let option, let path, let reason):
            "\(option) '\(path)': \(reason); give a PEM file."
        }
    }
}

/// The daemon handle; libmicrohttpd allows stopping it from any thread.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A connection parked while an async handler runs; resumed from the handler's task.
private struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the C callbacks need, reached through the `cls` pointer.
/// Strings copied for libmicrohttpd, freed with the context that owns them (after the daemon stops).
private final class DaemonStrings: Sendable {
    nonisolated(unsafe) let pointers: [UnsafeMutablePointer<CChar>]

    init(_ strings: [String]) {
        pointers = strings.map { strdup($0)! }
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }
}

private final class ServerContext: Sendable {
    let responder: Responder
    let maxBodySize: Int
    /// The certificate and key as C strings, for as long as the daemon may read them.
    let tls: DaemonStrings?
    /// Requests whose asynchronous handler runs, or whose connection is suspended for one and not
    /// yet taken back by libmicrohttpd; stopping the daemon with a connection still suspended would
    /// abort the process.
    let parked = ParkedRequests()
    let streams: OpenStreams

    /// Uncounts a request once, when libmicrohttpd is done with it: its answer sent, or its connection
    /// ended. (Uncounted when its answer was only queued, a stop could close the connection before
    /// the answer went out.)
    func releaseParked(_ state: RequestState) {
        guard state.countedAsParked else { return }
        state.countedAsParked = false
        parked.remove()
    }

    init(responder: Responder, maxBodySize: Int, streams: OpenStreams, tls: DaemonStrings?) {
        self.responder = responder
        self.maxBodySize = maxBodySize
        self.streams = streams
        self.tls = tls
    }
}

/// One request's state across libmicrohttpd's calls (headers, body chunks, final call, resume).
/// Only the connection's own thread touches it, except `answer`, which an async handler's task
/// hands over under a lock (and then resumes the connection if it was parked).
private final class RequestState: @unchecked Sendable {
    let receivedAt = ContinuousClock.now
    var body = Data()
    var tooLarge = false
    var parked = false
    /// Counted in ``ServerContext/parked`` from the start of its async handler until
    /// libmicrohttpd has taken the connection back (or, if the handler never suspended, until its
    /// answer is queued).
    var countedAsParked = false
    /// The event stream this request is answered with, told when the connection ends.
    var stream: EventStream?
    let answer = Mutex<AsyncAnswer>(.running)
}

/// Where an asynchronous handler stands, as the server thread that started it and the handler's
/// task both see it.
private enum AsyncAnswer {
    /// Started, not finished; the connection is not parked (yet).
    case running
    /// Suspended before it finished: the connection is parked until the task resumes it.
    case parked
    /// Finished, with its response.
    case finished(Response)
}

private let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, _, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let requestContext else { return .NO }
    let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let existing = requestContext.pointee else {
        // First call: the headers are in, the body (if any) is not.
        let state = RequestState()
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        if let length = connectionValue(connection, .HEADER_KIND, "Content-Length").flatMap(Int.init),
            length > server.maxBodySize
        {
            state.tooLarge = true
            // A body up to 8× the limit is read and dropped, so the client gets to read the 413
            // (answering early closes the connection under a client still sending: a broken pipe).
            if length > server.maxBodySize * 8 { return queue(tooLarge(server.maxBodySize), on: connection) }
        }
        return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()

    if let uploadDataSize, uploadDataSize.pointee > 0 {
        let size = uploadDataSize.pointee
        if !state.tooLarge, let uploadData {
            if state.body.count + size > server.maxBodySize {
                state.tooLarge = true
                state.body = Data()
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { state.body.append($0, count: size) }
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }

    if state.parked {
        // Resumed after an async handler finished: the connection is libmicrohttpd's again. It stays
        // counted until its answer is sent (`requestCompleted`): a stop must not close it before.
        guard case .finished(let response) = state.answer.withLock({ $0 }) else { return .NO }
        return queue(response, on: connection, state: state, server: server)
    }
    if state.tooLarge { return queue(tooLarge(server.maxBodySize), on: connection) }

    let request: Request
    do {
        request = try makeRequest(connection, url: url, method: method, body: state.body, receivedAt: state.receivedAt)
    } catch {
        // Keep the header fields, so the error is rendered as the client asked (JSON for API clients).
        let bare = Request(
            method: .get, path: "/", headers: headerFields(connection), receivedAt: state.receivedAt)
        return queue(server.responder.complete(bare, error), on: connection)
    }
    switch server.responder.resolve(request) {
    case .respond(let response):
        return queue(response, on: connection)
    case .run(.sync(let body), let routed):
        return queue(
            server.responder.complete(routed) { try body(routed) }, on: connection, state: state, server: server)
    case .run(.async(let body, let executor), let routed):
        return start(body, on: executor ?? HandlerExecutor.shared, routed, state: state, server: server, on: connection)
    }
}

/// Runs an asynchronous handler on this thread until it first suspends (`Task.immediate`), then on
/// `executor` (its own, or the ``HandlerExecutor``). A handler that never suspends (a SQLite write, say) is answered at
/// once; one that does parks the connection until its task resumes it. Handing every request to
/// another thread and back cost more CPU than many handlers' own work: a SQLite insert spent a
/// third of its time in thread switches.
private func start(
    _ body: @escaping @Sendable (Request) async throws -> Response, on executor: any TaskExecutor,
    _ routed: Request, state: RequestState, server: ServerContext, on connection: OpaquePointer
) -> MHD_Result {
    let handle = ConnectionHandle(pointer: connection)
    let responder = server.responder
    // Counted before the handler runs: a stop that sees anything it did also waits for its answer.
    state.countedAsParked = true
    server.parked.add()
    Task.immediate(executorPreference: executor) {
        let response: Response
        do { response = responder.complete(routed, try await body(routed)) } catch {
            response = responder.complete(routed, error)
        }
        let wasParked = state.answer.withLock { answer in
            defer { answer = .finished(response) }
            if case .parked = answer { return true }
            return false
        }
        if wasParked { MHD_resume_connection(handle.pointer) }
    }
    let finished: Response? = state.answer.withLock { answer in
        if case .finished(let response) = answer { return response }
        answer = .parked
        state.parked = true
        // Under the lock: the task, finishing on another thread, resumes only after this.
        MHD_suspend_connection(connection)
        return nil
    }
    guard let finished else { return .YES }
    // Counted until the answer is sent (`requestCompleted`).
    return queue(finished, on: connection, state: state, server: server)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
    guard let requestContext, let state = requestContext.pointee else { return }
    // Before libmicrohttpd closes the socket: a stream must not shut down a descriptor reused since.
    Unmanaged<RequestState>.fromOpaque(state).takeUnretainedValue().stream?.connectionEnded()
    if let cls {
        Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            .releaseParked(Unmanaged<RequestState>.fromOpaque(state).takeUnretainedValue())
    }
    Unmanaged<RequestState>.fromOpaque(state).release()
    requestContext.pointee = nil
}

private func tooLarge(_ limit: Int) -> Response {
    .jsonError("The request body is larger than the limit of \(limit) bytes.", status: .contentTooLarge)
}

private func makeRequest(
    _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, body: Data,
    receivedAt: ContinuousClock.Instant
) throws(HTTPError) -> Request {
    let rawPath = url.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
    var segments: [String] = []
    for raw in rawPath.split(separator: UInt8(ascii: "/")) {
        guard let segment = PercentDecoding.decode(raw, plusIsSpace: false) else {
            throw HTTPError(.badRequest, "The request path is not valid UTF-8 percent-encoding.")
        }
        segments.append(segment)
    }
    var query: [(name: String, value: String)] = []
    var queryValid = true
    forEachValue(connection, .GET_ARGUMENT_KIND) { name, value in
        guard let name = PercentDecoding.decode(name, plusIsSpace: true),
            let value = PercentDecoding.decode(value, plusIsSpace: true)
        else { return queryValid = false }
        query.append((name, value))
    }
    guard queryValid else { throw HTTPError(.badRequest, "The query string is not valid UTF-8 percent-encoding.") }
    // Methods are compared in upper case, as they always were here (`get` is GET).
    let methodName = method.map { String(cString: $0).uppercased() } ?? "GET"
    guard let requestMethod = HTTPRequest.Method(methodName) else {
        throw HTTPError(.badRequest, "The request method '\(methodName)' is not a valid HTTP method name.")
    }
    var request = Request(
        method: requestMethod, path: "/" + segments.joined(separator: "/"), pathSegments: segments,
        queryItems: query, headers: headerFields(connection), body: body, receivedAt: receivedAt)
    request.clientAddress = clientAddress(connection)
    return request
}

/// The client's numeric address, as libmicrohttpd saw it.
private func clientAddress(_ connection: OpaquePointer) -> String? {
    var buffer = [CChar](repeating: 0, count: 64)
    todosync_mhd_client_address(connection, &buffer, buffer.count)
    let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return address.isEmpty ? nil : address
}

/// The request's header fields in arrival order. A field whose name is not a valid token is left
/// out; values are legalised by `HTTPField` (control characters become spaces).
private func headerFields(_ connection: OpaquePointer) -> HTTPFields {
    var fields = HTTPFields()
    forEachValue(connection, .HEADER_KIND) { name, value in
        guard let name = HTTPField.Name(name) else { return }
        fields.append(HTTPField(name: name, value: value))
    }
    return fields
}

/// Calls `visit` with each (name, value) of one kind; a missing value is "".
private func forEachValue(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ visit: (String, String) -> Void) {
    withoutActuallyEscaping(visit) { visit in
        var box = visit
        withUnsafeMutablePointer(to: &box) { pointer in
            _ = MHD_get_connection_values(
                connection, kind,
                { cls, _, key, value in
                    guard let cls, let key else { return .YES }
                    let visit = cls.assumingMemoryBound(to: ((String, String) -> Void).self).pointee
                    visit(String(cString: key), value.map { String(cString: $0) } ?? "")
                    return .YES
                }, pointer)
        }
    }
}

private func connectionValue(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
}

/// Hands a response to libmicrohttpd, which adds `Content-Length` (or chunks an event stream) and
/// `Date`, omits the body for HEAD, and writes every header as `Name: value`.
private func queue(
    _ response: Response, on connection: OpaquePointer, state: RequestState? = nil, server: ServerContext? = nil
) -> MHD_Result {
    if let source = response.eventSource, let state, let server {
        return queueStream(source, response, on: connection, state: state, server: server)
    }
    let created = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let created else { return .NO }
    return queue(created, response, on: connection)
}

private func queue(_ created: OpaquePointer, _ response: Response, on connection: OpaquePointer) -> MHD_Result {
    defer { MHD_destroy_response(created) }
    for field in response.headers where !managedFields.contains(field.name) {
        _ = MHD_add_response_header(created, field.name.rawName, field.value)
    }
    return MHD_queue_response(connection, UInt32(response.status.code), created)
}

/// Header fields libmicrohttpd writes itself. `HTTPField` already guarantees the rest cannot split
/// the header block: names are tokens, and CR, LF and NUL in values become spaces.
private let managedFields: Set<HTTPField.Name> = [.contentLength, .transferEncoding, .connection, .date]

/// An event stream and the connection it is written to, reached through the content reader's `cls`.
private final class StreamWriter: @unchecked Sendable {
    let stream: EventStream
    let connection: ConnectionHandle
    let streams: OpenStreams

    init(stream: EventStream, connection: ConnectionHandle, streams: OpenStreams) {
        self.stream = stream
        self.connection = connection
        self.streams = streams
    }
}

/// Answers with an event stream: a chunked body that libmicrohttpd reads from the stream as events
/// come. With nothing to write, the reader parks the connection (no thread waits), and an event
/// resumes it. The request stays counted as parked until the connection ends, so a stop (which
/// finishes every stream first) waits for it.
private func queueStream(
    _ source: Response.EventSource, _ response: Response, on connection: OpaquePointer, state: RequestState,
    server: ServerContext
) -> MHD_Result {
    let stream = EventStream(bufferLimit: source.bufferLimit)
    let handle = ConnectionHandle(pointer: connection)
    let socket = todosync_mhd_connection_socket(connection)
    stream.attach(
        wake: { MHD_resume_connection(handle.pointer) },
        // libmicrohttpd sees the socket fail at its next poll and ends the connection.
        abort: { if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) } })
    state.stream = stream
    _ = server.streams.add(stream)
    if !state.countedAsParked {
        state.countedAsParked = true
        server.parked.add()
    }
    let writer = Unmanaged.passRetained(StreamWriter(stream: stream, connection: handle, streams: server.streams))
    // libmicrohttpd calls `streamEnded` when the response goes, queued or not, and so releases the writer.
    guard
        let created = MHD_create_response_from_callback(UInt64.max, 4096, streamReader, writer.toOpaque(), streamEnded)
    else {
        writer.release()
        stream.connectionEnded()
        server.streams.remove(stream)
        return .NO
    }
    let queued = queue(created, response, on: connection)
    if queued == .YES {
        let run = source.run
        Task {
            await run(stream)
            stream.finish()
        }
    }
    return queued
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }
    let writer = Unmanaged<StreamWriter>.fromOpaque(cls).takeUnretainedValue()
    let read = writer.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
        MHD_suspend_connection(writer.connection.pointer)
    }
    switch read {
    case .bytes(let count): return count
    case .parked: return 0
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .dropped: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the connection is closed
    }
}

private let streamEnded: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let writer = Unmanaged<StreamWriter>.fromOpaque(cls).takeRetainedValue()
    writer.stream.connectionEnded()
    writer.streams.remove(writer.stream)
}
