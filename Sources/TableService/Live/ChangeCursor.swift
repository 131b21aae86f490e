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

    /// Reads a cursor's text; nil when it is not one.
    init?(text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, first.count <= 19, first.allSatisfy(\.isASCIIDigit),
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

    private static func decode(_ text: Substring) -> String? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { String(data: $0, encoding: .utf8) }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
