import Foundation

/// A position in a table's changes: the keyset `(updatedAt, id)` of the latest row written, the
/// same position incremental pull pages by. Stamps are unique and taken in commit order per table
/// (see `IncrementalPull.md`), so a table's cursor strictly increases with every write.
///
/// Its text is `updatedAt` in milliseconds, a dot, and the id in base64url: `1764240000000.YWJj`.
/// An empty table's cursor is `0`, before every row.
struct ChangeCursor: Sendable, Hashable, Comparable {
    let updatedAt: Int64
    let id: String

    /// Before every row.
    static let start = ChangeCursor(updatedAt: 0, id: "")

    init(updatedAt: Int64, id: String) {
        self.updatedAt = updatedAt
        self.id = id
    }

    /// The texts ``init(text:)`` reads, as `/openapi.json` gives them: `0`, or milliseconds (at
    /// most 18 digits) with a dot and an id in unpadded base64url.
    static let pattern = "^[0-9]{1,18}(\\.([A-Za-z0-9_-]{4})*([A-Za-z0-9_-]{2,3})?)?$"

    /// Reads a cursor's text; nil when it does not match ``pattern``.
    init?(text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, first.count <= 18, first.allSatisfy(\.isASCIIDigit),
            let updatedAt = Int64(first)
        else { return nil }
        guard parts.count == 2 else {
            self.init(updatedAt: updatedAt, id: "")
            return
        }
        guard let id = Self.decode(parts[1]) else { return nil }
        self.init(updatedAt: updatedAt, id: id)
    }

    var text: String {
        id.isEmpty && updatedAt == 0 ? "0" : "\(updatedAt).\(Self.encode(id))"
    }

    static func < (lhs: ChangeCursor, rhs: ChangeCursor) -> Bool {
        (lhs.updatedAt, lhs.id) < (rhs.updatedAt, rhs.id)
    }

    private static func encode(_ id: String) -> String {
        Data(id.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The id of base64url `text` (unpadded, as ``encode(_:)`` writes it; a last group of 2 or 3
    /// characters, bits past the last byte ignored), bytes that are not UTF-8 replaced: any text
    /// of ``pattern`` is a position. `nil` for other text.
    private static func decode(_ text: Substring) -> String? {
        guard text.utf8.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        var bits: UInt32 = 0
        var count = 0
        for character in text.utf8 {
            guard let value = sextet(character) else { return nil }
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
