import Foundation
import HTTPTypes

/// What a handler answers: a status, header fields and the body's bytes.
public struct Response: Sendable {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: Data
    /// Set for a `text/event-stream` answer, whose body is written as its producer sends events.
    public internal(set) var eventSource: EventSource?

    public init(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/event-stream` answer: `run` starts once the answer's header is on its way, and sends
    /// events to the stream until it returns (the stream then ends) or the stream closes (the reader
    /// went away, fell `bufferLimit` bytes behind, or the server stops: `run` should watch
    /// ``EventStream/closed()``). The server sends a heartbeat comment every 15 seconds by itself,
    /// and a stopping server finishes every stream with a hint to reconnect.
    public static func eventStream(
        headers: HTTPFields = [:], bufferLimit: Int = 256 << 10,
        _ run: @escaping @Sendable (EventStream) async -> Void
    ) -> Response {
        var fields = headers
        fields[.contentType] = "text/event-stream; charset=utf-8"
        fields[.cacheControl] = "no-store"
        var response = Response(status: .ok, headers: fields)
        response.eventSource = EventSource(bufferLimit: bufferLimit, run: run)
        return response
    }

    /// What starts an event stream's producer.
    public struct EventSource: Sendable {
        let bufferLimit: Int
        let run: @Sendable (EventStream) async -> Void
    }

    /// An HTML page (`text/html; charset=utf-8`).
    public static func html(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: Data(html.utf8))
    }

    /// Plain text (`text/plain; charset=utf-8`).
    public static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    /// Bytes that are already JSON.
    public static func json(data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: data)
    }

    /// A value encoded as JSON.
    public static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(data: try encoder.encode(value), status: status)
    }

    /// `{"error": message}`, the error body of the table protocol.
    public static func jsonError(_ message: String, status: HTTPResponse.Status) -> Response {
        // Encoding a [String: String] cannot fail.
        (try? json(["error": message], status: status)) ?? Response(status: status)
    }

    /// 303 See Other: the answer to a form POST, so that reloading the next page repeats nothing.
    public static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}
