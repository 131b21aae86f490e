import Foundation
import SyncProtocol

/// Writes items as JSON bytes in the protocol's key order (`id`, `createdAt`, `updatedAt`,
/// `version`, `deleted`, then the fields), or in the legacy style (`id`, fields, `__createdAt`…).
/// Hand-written because it runs for every row of every page.
struct ItemJSONEncoder {
    let style: ProtocolStyle
    /// Columns to include (`$select`), `nil` for all.
    var selection: Set<String>? = nil
    /// In the legacy style, include `__version` even if not asked for (conflict bodies).
    var forceVersion = false

    func data(_ item: StoredItem) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        append(item, to: &bytes)
        return Data(bytes)
    }

    func append(_ item: StoredItem, to bytes: inout [UInt8]) {
        var object = ObjectWriter(bytes: bytes)
        bytes = []
        defer { bytes = object.finish() }
        let selection = selection
        func wanted(_ column: String) -> Bool {
            selection?.contains(column) ?? true
        }
        if wanted(SystemColumn.id) {
            object.key(SystemColumn.id)
            Self.appendString(item.id, to: &object.bytes)
        }
        switch style {
        case .v2:
            appendSystem(item, to: &object, legacy: false, wanted: wanted)
            for field in item.fields where wanted(field.name) {
                object.key(field.name)
                Self.append(field.value, to: &object.bytes)
            }
        case .legacy(let properties):
            for field in item.fields where wanted(field.name) && ProtocolStyle.legacySystemColumn(field.name) == nil {
                object.key(field.name)
                Self.append(field.value, to: &object.bytes)
            }
            let forceVersion = forceVersion
            appendSystem(item, to: &object, legacy: true) {
                (properties.contains($0) || (forceVersion && $0 == SystemColumn.version)) && wanted($0)
            }
        }
    }

    /// Writes `{"key":value,...}` one key at a time.
    private struct ObjectWriter {
        var bytes: [UInt8]
        var first = true

        mutating func key(_ name: String) {
            bytes.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            ItemJSONEncoder.appendString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }

        mutating func finish() -> [UInt8] {
            if first { bytes.append(UInt8(ascii: "{")) }
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }
    }

    private func appendSystem(
        _ item: StoredItem, to object: inout ObjectWriter, legacy: Bool, wanted: (String) -> Bool
    ) {
        func name(_ column: String) -> String { legacy ? SystemColumn.legacyName(column) : column }
        if wanted(SystemColumn.createdAt) {
            object.key(name(SystemColumn.createdAt))
            appendDate(item.createdAt, to: &object.bytes)
        }
        if wanted(SystemColumn.updatedAt) {
            object.key(name(SystemColumn.updatedAt))
            appendDate(item.updatedAt, to: &object.bytes)
        }
        if wanted(SystemColumn.version) {
            object.key(name(SystemColumn.version))
            Self.appendString(item.version, to: &object.bytes)
        }
        if wanted(SystemColumn.deleted) {
            object.key(name(SystemColumn.deleted))
            object.bytes += item.deleted ? Array("true".utf8) : Array("false".utf8)
        }
    }

    private func appendDate(_ milliseconds: Int64, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        ProtocolDate.append(milliseconds: milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes += Array("null".utf8)
        case .bool(let bool): bytes += Array((bool ? "true" : "false").utf8)
        case .string(let string): appendString(string, to: &bytes)
        case .number(let number):
            if number.rounded() == number, abs(number) < 9_007_199_254_740_992 {
                bytes += Array(String(Int64(number)).utf8)
            } else {
                bytes += Array("\(number)".utf8)
            }
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in object.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(name, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                append(object[name]!, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    static func appendString(_ string: String, to bytes: inout [UInt8]) {
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
