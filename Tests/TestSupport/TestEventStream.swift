import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SyncProtocol

/// An open `text/event-stream` answer, read event by event.
public final class TestEventStream: @unchecked Sendable {
    public let status: Int
    public let headers: HTTPHeaders
    private var body: HTTPClientResponse.Body.AsyncIterator
    /// When reading gives up: heartbeats keep a stream alive past any read timeout.
    private let deadline: ContinuousClock.Instant
    private var parser = EventStreamParser()
    private var ready: [ReceivedEvent] = []
    /// Every byte read so far, comments and all.
    public private(set) var text = ""

    init(_ response: HTTPClientResponse, deadline: ContinuousClock.Instant) {
        status = Int(response.status.code)
        headers = response.headers
        body = response.body.makeAsyncIterator()
        self.deadline = deadline
    }

    /// The stream's deadline passed before the event the test waited for.
    public struct DeadlinePassed: Error, CustomStringConvertible {
        public let description = "the event stream's deadline passed before the next event came"
    }

    /// The next event, or nil once the server ended the stream.
    public func next() async throws -> ReceivedEvent? {
        while ready.isEmpty {
            if ContinuousClock.now > deadline { throw DeadlinePassed() }
            guard let chunk = try await body.next() else { return nil }
            text += String(buffer: chunk)
            ready = try parser.feed(chunk.readableBytesView)
        }
        return ready.removeFirst()
    }

    /// Reads until the server ends the stream; the events left.
    public func rest() async throws -> [ReceivedEvent] {
        var events: [ReceivedEvent] = []
        while let event = try await next() { events.append(event) }
        return events
    }

    /// The `retry:` the stream asked for last, in milliseconds.
    public var retryMilliseconds: Int? { parser.retryMilliseconds }
}

extension TestHTTPClient {
    /// Opens an event stream (`Accept: text/event-stream`); its events are read with
    /// ``TestEventStream/next()``. The deadline ends a stream that would never end: past it, the
    /// next chunk (a heartbeat, say) ends the reading, or the client's read timeout a silent one.
    public func events(
        _ url: String, headers: HTTPFields = [:], deadline: Duration = .seconds(120)
    ) async throws -> TestEventStream {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "text/event-stream")
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        let end = ContinuousClock.now + deadline
        let response = try await execute(request, deadline: deadline)
        return TestEventStream(response, deadline: end)
    }
}
