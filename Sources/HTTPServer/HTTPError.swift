import HTTPTypes

/// An error that knows which HTTP status and message it should be answered with.
///
/// Any error type can conform; the server turns a thrown one into an error response
/// (HTML or JSON, by the request's `Accept`). Errors that do not conform are answered
/// with 500 and logged, their text is not shown to the client.
public protocol HTTPResponseError: Error {
    /// The status to answer with; its reason phrase titles the error page.
    var status: HTTPResponse.Status { get }
    /// A sentence for the person or program that sent the request: what went wrong and what to do.
    var message: String { get }
}

/// The plain error of this layer: a status and a message, as in `HTTPError(.badRequest, "...")`.
public struct HTTPError: HTTPResponseError, Equatable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let message: String

    /// An error answered with `status` (a named one, such as `.notFound`, so the error page has its
    /// reason phrase) and `message`.
    public init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// 404 with the message for an address that leads nowhere.
    public static func notFound(_ message: String = "There is nothing at this address.") -> HTTPError {
        HTTPError(.notFound, message)
    }

    public var description: String { "\(status.code) \(message)" }
}
