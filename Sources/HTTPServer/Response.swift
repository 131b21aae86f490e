import Foundation

/// What a handler answers: a status, header fields and the body's bytes.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data

    public init(status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An HTML page (`text/html; charset=utf-8`).
    public static func html(_ html: String, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Data(html.utf8))
    }

    /// Plain text (`text/plain; charset=utf-8`).
    public static func text(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    /// Bytes that are already JSON.
    public static func json(data: Data, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: data)
    }

    /// A value encoded as JSON.
    public static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(data: try encoder.encode(value), status: status)
    }

    /// `{"error": message}`, the error body of the table protocol.
    public static func jsonError(_ message: String, status: Int) -> Response {
        // Encoding a [String: String] cannot fail.
        (try? json(["error": message], status: status)) ?? Response(status: status)
    }

    /// 303 See Other: the answer to a form POST, so that reloading the next page repeats nothing.
    public static func redirect(to location: String) -> Response {
        Response(status: 303, headers: ["Location": location])
    }
}
