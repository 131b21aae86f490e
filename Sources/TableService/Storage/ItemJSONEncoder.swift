import Foundation
import SyncProtocol

/// Writes items as JSON bytes in the protocol's key order (`id`, `createdAt`, `updatedAt`,
/// `version`, `deleted`, then the fields; v3 has no `createdAt`), or in the legacy style (`id`,
/// fields, `__createdAt`…).
/// Hand-written because it runs for every row of every page.
struct ItemJSONEncoder: Sendable {
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
            JSONValue.writeString(item.id, to: &object.bytes)
        }
        switch style {
        case .v2, .v3:
            let withCreatedAt = style == .v2
            appendSystem(item, to: &object, legacy: false) {
                $0 != SystemColumn.createdAt || withCreatedAt ? wanted($0) : false
            }
            for field in item.fields where wanted(field.name) {
                object.key(field.name)
                field.value.write(to: &object.bytes)
            }
        case .legacy(let properties):
            for field in item.fields where wanted(field.name) && ProtocolStyle.legacySystemColumn(field.name) == nil {
                object.key(field.name)
                field.value.write(to: &object.bytes)
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
            JSONValue.writeString(name, to: &bytes)
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
            JSONValue.writeString(item.version, to: &object.bytes)
        }
        if wanted(SystemColumn.deleted) {
            object.key(name(SystemColumn.deleted))
            object.bytes += item.deleted ? Self.trueBytes : Self.falseBytes
        }
    }

    private func appendDate(_ milliseconds: Int64, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        ProtocolDate.append(milliseconds: milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
