/// One event read from a `text/event-stream` body.
public struct ReceivedEvent: Sendable, Equatable {
    /// The `id:` field, or the last one the stream gave (the WHATWG "last event ID").
    public var id: String?
    /// The `event:` field; `message` when the event named none.
    public var event: String
    /// The `data:` lines, joined with line feeds.
    public var data: String

    public init(id: String?, event: String = "message", data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// Reads a `text/event-stream` body as it arrives, in chunks cut anywhere, and yields its events:
/// the WHATWG Server-Sent Events parsing rules (fields, comments, CR/LF/CRLF line ends, the last
/// event ID that carries over, `retry:`), for a client that is not a browser.
///
/// Written here because none of the packages this project may use parses the format.
public struct EventStreamParser: Sendable {
    /// The reconnection delay the stream asked for last (`retry:`), in milliseconds.
    public private(set) var retryMilliseconds: Int?
    private var line: [UInt8] = []
    private var lastEventId: String?
    private var event = ""
    private var data: [String] = []
    private var hasData = false
    private var afterCarriageReturn = false
    /// A line longer than this ends the stream as malformed (a hostile server could send no line end).
    private let maxLineLength: Int

    public init(maxLineLength: Int = 1 << 20) {
        self.maxLineLength = maxLineLength
    }

    /// A line longer than the parser's limit.
    public struct LineTooLong: Error, CustomStringConvertible {
        public var description: String {
            "The event stream sent a line longer than the limit; it is not a stream of events."
        }
    }

    /// Feeds the next bytes; returns the events they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [ReceivedEvent] {
        var events: [ReceivedEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            case UInt8(ascii: "\n"):
                if let event = endLine() { events.append(event) }
            default:
                guard line.count < maxLineLength else { throw LineTooLong() }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ReceivedEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line.first != UInt8(ascii: ":") else { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            (name, value) = (text[...], "")
        }
        switch name {
        case "event": event = String(value)
        case "data":
            data.append(String(value))
            hasData = true
        case "id" where !value.contains("\0"): lastEventId = String(value)
        case "retry": if let milliseconds = Int(value), milliseconds >= 0 { retryMilliseconds = milliseconds }
        default: break
        }
        return nil
    }

    /// A blank line: the event gathered so far, if it has data.
    private mutating func dispatch() -> ReceivedEvent? {
        defer {
            event = ""
            data = []
            hasData = false
        }
        guard hasData else { return nil }
        return ReceivedEvent(
            id: lastEventId, event: event.isEmpty ? "message" : event, data: data.joined(separator: "\n"))
    }
}
