/// Strict percent-decoding of URL paths, query strings and form bodies.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusIsSpace`) and checks the result is UTF-8.
    /// Returns `nil` for a broken escape or bytes that are not UTF-8.
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, plusIsSpace: Bool) -> String? {
        // Most segments and arguments have nothing to decode: checked as they are, without a copy.
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(validating: bytes, as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                let high = bytes.index(after: index)
                guard high != bytes.endIndex else { return nil }
                let low = bytes.index(after: high)
                guard low != bytes.endIndex, let h = hexValue(bytes[high]), let l = hexValue(bytes[low]) else {
                    return nil
                }
                output.append(h << 4 | l)
                index = bytes.index(after: low)
                continue
            case UInt8(ascii: "+") where plusIsSpace:
                output.append(UInt8(ascii: " "))
            default:
                output.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(validating: output, as: UTF8.self)
    }

    /// Decodes a string; see ``decode(_:plusIsSpace:)``.
    public static func decode(_ string: String, plusIsSpace: Bool = false) -> String? {
        decode(Array(string.utf8), plusIsSpace: plusIsSpace)
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    public static func encode(_ string: String) -> String {
        var output = ""
        output.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += "%"
                output += String(byte >> 4, radix: 16, uppercase: true)
                output += String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// `application/x-www-form-urlencoded` pairs, in order.
public struct URLEncodedForm: Sendable {
    public let pairs: [(name: String, value: String)]

    /// Parses `a=1&b=x+y%21`. Throws 400 when an escape is broken or the text is not UTF-8.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes) throws(HTTPError)
    where Bytes.SubSequence: Collection<UInt8> {
        var pairs: [(String, String)] = []
        for part in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let pieces = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentDecoding.decode(pieces[0], plusIsSpace: true),
                let value = pieces.count > 1 ? PercentDecoding.decode(pieces[1], plusIsSpace: true) : ""
            else {
                throw HTTPError(.badRequest, "The form data is not valid UTF-8 percent-encoding.")
            }
            pairs.append((name, value))
        }
        self.pairs = pairs
    }

    /// The first value given for `name`.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// Every value given for `name`, in order.
    public func values(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }
}
