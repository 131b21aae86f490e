internal import CMicroHTTPD
internal import CMicroHTTPDShim
import Foundation

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
func queueStream(
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
        // Unstructured: called from libmicrohttpd's callback, with no task to be a child of; the
        // stream ends when its source does or its connection goes.
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
