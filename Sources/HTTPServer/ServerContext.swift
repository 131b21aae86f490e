internal import CMicroHTTPD
import Foundation
import Synchronization

/// The daemon handle; libmicrohttpd allows stopping it from any thread.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A connection parked while an async handler runs; resumed from the handler's task.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Strings copied for libmicrohttpd, freed with the context that owns them (after the daemon stops).
final class DaemonStrings: Sendable {
    nonisolated(unsafe) let pointers: [UnsafeMutablePointer<CChar>]

    init(_ strings: [String]) {
        pointers = strings.map { strdup($0)! }
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }
}

/// What the C callbacks need, reached through the `cls` pointer.
final class ServerContext: Sendable {
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
final class RequestState: @unchecked Sendable {
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
enum AsyncAnswer {
    /// Started, not finished; the connection is not parked (yet).
    case running
    /// Suspended before it finished: the connection is parked until the task resumes it.
    case parked
    /// Finished, with its response.
    case finished(Response)
}
