import HTTPServer
import SyncProtocol

/// Who a request comes from, as the fleet knows it: its `X-ZUMO-INSTALLATION-ID` (the device) and
/// what a todosync client says of itself in `X-TodoSync-Client-State`. Both are read before the
/// request runs; a malformed one refuses the request (400) and nothing is noted.
struct DeviceIdentity: Sendable, Equatable {
    /// The longest device id taken.
    static let longestID = 128

    let id: String
    let reported: ClientState?

    /// The device of `request`; nil when it names none (it is served, and noted nowhere).
    static func of(_ request: Request) throws(TableError) -> DeviceIdentity? {
        guard let raw = request.headers.value(ProtocolHeader.installationID) else { return nil }
        let id = try checkedID(raw)
        let reported = try request.headers[ProtocolHeader.clientState].map { text throws(TableError) in
            try ClientState(parsing: text)
        }
        return DeviceIdentity(id: id, reported: reported)
    }

    /// `raw` as a device id: 1 to ``longestID`` characters of `A-Z a-z 0-9 . _ : -`.
    static func checkedID(_ raw: String) throws(TableError) -> String {
        let bytes = raw.utf8
        guard !bytes.isEmpty, bytes.count <= longestID, bytes.allSatisfy(isIDByte) else {
            throw .invalidRequest(
                "X-ZUMO-INSTALLATION-ID must be 1 to \(longestID) letters, digits, '.', '_', ':' or '-'; "
                    + "'\(raw.prefix(40))\(raw.count > 40 ? "…" : "")' is not.")
        }
        return raw
    }

    private static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
