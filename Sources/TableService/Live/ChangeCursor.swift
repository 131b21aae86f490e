import Foundation

/// A position in a table's changes: the keyset `(updatedAt, id)` of the latest row written, the
/// same position incremental pull pages by. No row commits behind a cursor once it was answered
/// (see `IncrementalPull.md`), so a table's cursor strictly increases with its writes.
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
    /// most 18 digits) with a dot and an id in unpadded base64url (its last character leaves no
    /// bits past the id's last byte, as ``encode(_:)`` writes it).
    static let pattern =
        "^[0-9]{1,18}(\\.([A-Za-z0-9_-]{4})*([A-Za-z0-9_-][AQgw]|[A-Za-z0-9_-]{2}[AEIMQUYcgkosw048])?)?$"

    /// Reads a cursor's text; nil when it does not match ``pattern``. An id whose bytes are not
    /// UTF-8 is still a position (its bytes replaced): any text of the pattern is a cursor.
    init?(text: String) {
        // Compiled per call (a subscription's start): Regex is not Sendable, so it cannot be a static.
        guard let form = try? Regex(Self.pattern), text.wholeMatch(of: form) != nil else { return nil }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, let updatedAt = Int64(first)
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

    private static func decode(_ text: Substring) -> String? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) }
    }
}
