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
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: ProtocolHeader.apiVersion.rawName, value: tableProtocol.apiVersion)
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let applicationKey, !applicationKey.isEmpty {
            request.headers.add(name: ProtocolHeader.applicationKey.rawName, value: applicationKey)
        }
        let token = try await currentToken()
        try checkPlainHTTP(sendsSecret: token != nil || applicationKey.map { !$0.isEmpty } == true)
        if let authField = authField(token) {
            request.headers.add(name: authField.name.rawName, value: authField.value)
        }
        if let cursor { request.headers.add(name: "Last-Event-ID", value: cursor) }
        let (client, deadlines, sent, heard) = (client, deadlines.unending, deadlines.clock.now, HeardTime())
        let subscription = request
        let response: HTTPClientResponse
        do {
            response = try await deadlines.bounding(started: sent, heard: heard) {
                let response = try await client.execute(subscription, deadline: .distantFuture)
                heard.heard(at: deadlines.clock.now)
                return response
            }
        } catch {
            throw describe(error, url: url)
        }
        let status = Int(response.status.code)
        let type = response.headers.first(name: "content-type") ?? ""
        switch status {
        case 200 where type.hasPrefix("text/event-stream"): break
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
                status: status, retryAfter: response.headers.first(name: "retry-after").flatMap(TimeInterval.init))
        }
        let body = response.body
        let cursors = AsyncThrowingStream<String, any Error> { continuation in
            let reader = Task {
                do {
                    try await deadlines.bounding(started: sent, heard: heard) {
                        var parser = EventStreamParser()
                        for try await chunk in body {
                            heard.heard(at: deadlines.clock.now)
                            for event in try parser.feed(chunk.readableBytesView) where event.event == "change" {
                                if let id = event.id { continuation.yield(id) }
                            }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
        return .stream(cursors)
    }
}
