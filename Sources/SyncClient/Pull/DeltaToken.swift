import Foundation
import SyncProtocol

/// Where an incremental pull stands: the last row seen, as the keyset cursor `(updatedAt, id)`, or
/// (for servers where the cursor makes no progress) `updatedAt` plus a `$skip` count.
struct DeltaToken: Codable, Hashable, Sendable {
    var updatedAt: String?
    var id: String?
    /// Set in the fallback mode: rows already seen at `updatedAt`.
    var skip: Int?

    /// The `$filter` part that asks for rows after the cursor, in `tableProtocol`'s literals.
    func filter(in tableProtocol: TableProtocol) -> String? {
        guard let updatedAt else { return nil }
        let time = tableProtocol.instant(updatedAt)
        if skip != nil { return "(updatedAt ge \(time))" }
        guard let id else { return "(updatedAt ge \(time))" }
        return "((updatedAt gt \(time)) or (updatedAt eq \(time) and id gt \(TableQuery.odataString(id))))"
    }

    /// Orders two `updatedAt` values (ISO-8601 text, compared as instants).
    static func compare(_ left: String, _ right: String) -> ComparisonResult {
        if left.utf8.count == right.utf8.count, left.hasSuffix("Z"), right.hasSuffix("Z") {
            return left == right ? .orderedSame : (left < right ? .orderedAscending : .orderedDescending)
        }
        if let a = ProtocolDate.parse(left), let b = ProtocolDate.parse(right) {
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
        return left == right ? .orderedSame : (left < right ? .orderedAscending : .orderedDescending)
    }

    /// Whether `(updatedAt, id)` comes after the cursor.
    func isBefore(updatedAt other: String, id otherId: String) -> Bool {
        guard let updatedAt else { return true }
        switch Self.compare(updatedAt, other) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return (id ?? "") < otherId
        }
    }
}

extension DeltaToken {
    /// A token as it is saved (JSON); nil when it cannot be read.
    init?(stored text: String) {
        guard let token = try? JSONDecoder().decode(DeltaToken.self, from: Data(text.utf8)) else { return nil }
        self = token
    }

    /// The token as it is saved.
    var stored: String {
        get throws { String(decoding: try JSONEncoder().encode(self), as: UTF8.self) }
    }
}
