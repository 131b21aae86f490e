import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol

/// What the service answered to a subscription of its change channel.
enum ChangeStreamOpening: Sendable {
    /// A stream of cursors, one per change the service announces; it ends (or throws) when the
    /// connection does.
    case stream(AsyncThrowingStream<String, any Error>)
    /// The service has no change channel (the official Mobile Apps server, a Datasync service):
    /// the status it answered.
    case notOffered(Int)
    /// Come back later (503 with `Retry-After`, or another error status).
    case refused(status: Int, retryAfter: TimeInterval?)
    /// The service refused the cursor (400): it is past the table's newest change, so the database
    /// behind the address is another one (restored from a backup, replaced). Subscribe without it.
    case cursorRefused
}

extension HTTPTransport {
    /// Opens `GET /tables/{table}/$changes` as Server-Sent Events, resumed after `cursor` when given.
    /// No deadline but the idle one (``ExchangeDeadlines/unending``): the service sends a heartbeat
    /// every 15 s, so a silent connection is a dead one.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the service cannot be reached or refuses the
    ///   sign-in (``StopReason/notAuthorized(_:)``).
    func openChanges(table: String, after cursor: String?) async throws(SyncError) -> ChangeStreamOpening {
        let url = base + path(table: table) + "/$changes"
        var headers = NIOHTTP1.HTTPHeaders([
            (ProtocolHeader.apiVersion.rawName, tableProtocol.apiVersion), ("Accept", "text/event-stream"),
        ])
        if let applicationKey, !applicationKey.isEmpty {
            headers.add(name: ProtocolHeader.applicationKey.rawName, value: applicationKey)
        }
        let token = try await currentToken()
        try checkPlainHTTP(sendsSecret: token != nil || applicationKey.map { !$0.isEmpty } == true)
        if let authField = authField(token) { headers.add(name: authField.name.rawName, value: authField.value) }
        if let cursor { headers.add(name: "Last-Event-ID", value: cursor) }
        let delegate = ChangeStreamDelegate(clock: deadlines.clock)
        let task: HTTPClient.Task<Void>
        do {
            task = client.execute(
                request: try HTTPClient.Request(url: url, method: .GET, headers: headers), delegate: delegate)
        } catch {
            throw describe(error, url: url)
        }
        // The idle deadline, from sending until the stream ends: a silent stream is a dead one.
        let (idle, sent) = (deadlines.unending, deadlines.clock.now)
        let watch = idle.watch(started: sent, heard: delegate.heard) { passed in
            delegate.stop(passed)
            task.cancel()
        }
        let head: HTTPResponseHead
        do {
            head = try await withTaskCancellationHandler {
                try await delegate.responseHead(of: task)
            } onCancel: {
                task.cancel()
            }
        } catch {
            watch.stop()
            throw describe(error, url: url)
        }
        let status = Int(head.status.code)
        let type = head.headers.first(name: "content-type") ?? ""
        if status == 200, type.hasPrefix("text/event-stream") {
            delegate.whenTerminated {
                watch.stop()
                task.cancel()
            }
            return .stream(delegate.cursors)
        }
        watch.stop()
        task.cancel()
        switch status {
        case 401 where tokenSupply != nil && token != nil:
            // The command gives the next token; the stream is opened again with it a second later.
            _ = try await tokenSupply?.refused(token ?? "")
            return .refused(status: status, retryAfter: 1)
        case 401:
            throw .stopped(
                .notAuthorized(status: .unauthorized, message: "The change channel refused the sign-in; sign in again.")
            )
        case 400 where cursor != nil: return .cursorRefused
        case 200, 300..<500: return .notOffered(status)
        default:
            return .refused(
                status: status, retryAfter: head.headers.first(name: "retry-after").flatMap(TimeInterval.init))
        }
    }
}
