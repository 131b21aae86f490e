import Foundation

extension JSONValue {
    /// The value as compact JSON bytes, object keys sorted, whole numbers without a fraction.
    ///
    /// Hand-written: Foundation's `JSONEncoder` took several times as long on every row the
    /// service answers and on every change the client sends.
    public var jsonData: Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(to: &bytes)
        return Data(bytes)
    }

    /// The value as compact JSON text (see ``jsonData``).
    public var jsonText: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value as compact JSON (see ``jsonData``).
    public func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes += "null".utf8
        case .bool(let bool): bytes += (bool ? "true" : "false").utf8
        case .string(let string): Self.writeString(string, to: &bytes)
        case .number(let number):
            if number.rounded() == number, abs(number) < 9_007_199_254_740_992 {
                bytes += String(Int64(number)).utf8
            } else {
                bytes += "\(number)".utf8
            }
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in object.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(name, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                object[name]!.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends `string` as a JSON string literal (quotes, `\"`, `\\` and control characters escaped).
    public static func writeString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        // Most values need no escaping: copy them in one go (native strings are contiguous UTF-8).
        let copied = utf8.withContiguousStorageIfAvailable { buffer -> Bool in
            for byte in buffer where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            bytes.append(contentsOf: buffer)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                bytes += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                ]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension [String: JSONValue] {
    /// The object as compact JSON bytes (see ``JSONValue/jsonData``).
    public var jsonData: Data { JSONValue.object(self).jsonData }
}
