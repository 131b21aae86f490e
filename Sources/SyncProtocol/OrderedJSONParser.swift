/// Parses a JSON object, or a page of them, keeping the order of their keys (Foundation's decoder
/// does not), so that the service creates columns in the order a client first sent them, as the
/// official server does. Strict RFC 8259: no comments, no trailing commas, nesting limited.
///
/// Written here rather than taken from a library: none on the packages' list parses JSON into
/// values, and Foundation's `JSONDecoder` into ``JSONValue`` tries each type in turn, throwing as it
/// goes, which made it the slowest step of reading a service's answer.
public struct OrderedJSONParser {
    /// A JSON object as written: its members in order.
    public typealias Members = [(name: String, value: JSONValue)]

    /// Why a text is not what was expected, and at which byte.
    public struct Failure: Error {
        public let message: String
    }

    /// How deeply a request body may nest.
    public static let maximumDepth = 32

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var index = 0
    private var depth = 0

    init(_ bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// The members of the top-level object in `bytes`; fails if it is not exactly one JSON object,
    /// or nests deeper than `maximumDepth`.
    public static func object(_ bytes: [UInt8], maximumDepth: Int = maximumDepth) throws(Failure) -> Members {
        var parser = OrderedJSONParser(bytes, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { throw Failure(message: "the body is not a JSON object") }
        let members = try parser.members()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("text after the end of the object") }
        return members
    }

    /// The JSON value that is the whole of `bytes` (any value, not only an object).
    public static func value(_ bytes: [UInt8], maximumDepth: Int = maximumDepth) throws(Failure) -> JSONValue {
        var parser = OrderedJSONParser(bytes, maximumDepth: maximumDepth)
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("text after the end of the value") }
        return value
    }

    // MARK: Values

    mutating func members() throws(Failure) -> Members {
        var members: Members = []
        try eachMember { parser, name throws(Failure) in members.append((name, try parser.value())) }
        return members
    }

    /// Reads an object, handing each member's name to `readValue`, which must read its value.
    mutating func eachMember(
        _ readValue: (inout OrderedJSONParser, String) throws(Failure) -> Void
    ) throws(Failure) {
        try eachItem(closing: UInt8(ascii: "}"), in: "an object") { parser throws(Failure) in
            guard parser.peek() == UInt8(ascii: "\"") else {
                throw parser.failure("expected a property name in double quotes")
            }
            let name = try parser.string()
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: ":") else { throw parser.failure("expected ':' after a property name") }
            parser.index += 1
            try readValue(&parser, name)
        }
    }

    mutating func value() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw failure("the body ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"):
            var object: [String: JSONValue] = [:]
            for member in try members() { object[member.name] = member.value }
            return .object(object)
        case UInt8(ascii: "["):
            var elements: [JSONValue] = []
            try eachElement { parser throws(Failure) in elements.append(try parser.value()) }
            return .array(elements)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try word("true", .bool(true))
        case UInt8(ascii: "f"): return try word("false", .bool(false))
        case UInt8(ascii: "n"): return try word("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    /// Reads an array, calling `readElement` to read each element.
    mutating func eachElement(_ readElement: (inout OrderedJSONParser) throws(Failure) -> Void) throws(Failure) {
        try eachItem(closing: UInt8(ascii: "]"), in: "an array", readElement)
    }

    /// Reads an object or an array (its opening bracket is at the parser's position) up to `close`:
    /// `readItem` reads each comma-separated item.
    private mutating func eachItem(
        closing close: UInt8, in container: String, _ readItem: (inout OrderedJSONParser) throws(Failure) -> Void
    ) throws(Failure) {
        try enter()
        index += 1  // { or [
        skipWhitespace()
        if peek() == close {
            index += 1
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            try readItem(&self)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case close:
                index += 1
                depth -= 1
                return
            default: throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' in \(container)")
            }
        }
    }

    private mutating func word(_ text: StaticString, _ value: JSONValue) throws(Failure) -> JSONValue {
        let count = text.utf8CodeUnitCount
        let matches = text.withUTF8Buffer { expected in
            index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
        }
        guard matches else { throw failure("unexpected word") }
        index += count
        return value
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("malformed number") }
        if first == UInt8(ascii: "0") { index += 1 } else { while let byte = peek(), isDigit(byte) { index += 1 } }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek(), isDigit(byte) else { throw failure("malformed number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), isDigit(byte) else { throw failure("malformed number") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw failure("number out of range")
        }
        return .number(value)
    }

    mutating func string() throws(Failure) -> String {
        index += 1  // opening quote
        // Most strings have no escape: they are their bytes.
        let start = index
        var highBits: UInt8 = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20
        {
            highBits |= bytes[index]
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return try text(start..<index - 1, ascii: highBits < 0x80)
        }
        var output = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = output.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else {
                    throw failure("text that is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = peek() else { break }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count,
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("a lone UTF-16 surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone UTF-16 surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("a lone UTF-16 surrogate") }
                    output.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: throw failure("an unknown escape")
                }
            case 0..<0x20:
                throw failure("a control character inside a string (escape it)")
            default:
                output.append(byte)
            }
        }
        throw failure("a string that is never closed")
    }

    /// The text of `range` (a string's bytes without escapes). ASCII is valid UTF-8 as it is, and
    /// decoding a buffer is the standard library's fast path; `String(validating:)` over an array
    /// slice was a generic call (a metadata lookup per string: a fifth of a page's decoding).
    private func text(_ range: Range<Int>, ascii: Bool) throws(Failure) -> String {
        let text = bytes.withUnsafeBufferPointer { buffer in
            let slice = UnsafeBufferPointer(rebasing: buffer[range])
            return ascii ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
        }
        guard let text else { throw failure("text that is not UTF-8") }
        return text
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a malformed \\u escape")
            }
            value = value * 16 + UInt32(digit)
        }
        index += 4
        return value
    }

    // MARK: Helpers

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > maximumDepth { throw failure("nesting deeper than \(maximumDepth) levels") }
    }

    /// Whether the whole text has been read.
    var isAtEnd: Bool { index == bytes.count }

    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    func failure(_ what: String) -> Failure {
        Failure(message: "\(what) at byte \(index)")
    }
}
