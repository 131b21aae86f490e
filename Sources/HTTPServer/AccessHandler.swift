internal import CMicroHTTPD
internal import CMicroHTTPDShim
import Foundation
import HTTPTypes

let accessHandler: MHD_AccessHandlerCallback = {
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

let requestCompleted: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
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
    let segments = try Request.pathSegments(
        url.map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    )
    var query: [(name: String, value: String)] = []
    var queryValid = true
    forEachValue(connection, .GET_ARGUMENT_KIND) { name, value in
        guard let name = PercentDecoding.decode(name, plusIsSpace: true),
            let value = PercentDecoding.decode(value, plusIsSpace: true)
        else { return queryValid = false }
        query.append((name, value))
    }
    guard queryValid else { throw Request.queryNotDecodable }
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
    // On the stack: an address is written for every request.
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> String? in
        todosync_mhd_client_address(connection, buffer.baseAddress!, buffer.count)
        buffer[buffer.count - 1] = 0
        let address = String(cString: buffer.baseAddress!)
        return address.isEmpty ? nil : address
    }
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
func queue(
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

func queue(_ created: OpaquePointer, _ response: Response, on connection: OpaquePointer) -> MHD_Result {
    defer { MHD_destroy_response(created) }
    for field in response.headers where !managedFields.contains(field.name) {
        _ = MHD_add_response_header(created, field.name.rawName, field.value)
    }
    return MHD_queue_response(connection, UInt32(response.status.code), created)
}

/// Header fields libmicrohttpd writes itself. `HTTPField` already guarantees the rest cannot split
/// the header block: names are tokens, and CR, LF and NUL in values become spaces.
private let managedFields: Set<HTTPField.Name> = [.contentLength, .transferEncoding, .connection, .date]
