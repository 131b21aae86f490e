import Foundation

/// Which life of a service's data an answer comes from.
///
/// A service begins an epoch when it first creates its database, and a new one when its data goes
/// back in time: a restore from a backup (`todosync restore`), or a PostgreSQL cluster recovered to
/// an earlier point. Its answers carry the epoch in ``ProtocolHeader/epoch``:
/// `X-TodoSync-Epoch: 3f2a…` or, after a restore, `X-TodoSync-Epoch: 3f2a…; restored-to=2026-12-06T10:15:00.000Z`.
/// A client that saw another epoch before can no longer trust its delta tokens, nor assume that the
/// service holds the rows it synced: it reads the service's rows again and reconciles.
public struct ServiceEpoch: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The epoch's id: random, unique to one life of the data.
    public var id: String
    /// The moment the data went back to, in milliseconds since 1970 (nil: never restored).
    public var restoredTo: Int64?

    /// An epoch with `id`, restored to `restoredTo` when it began with a restore.
    public init(id: String, restoredTo: Int64? = nil) {
        self.id = id
        self.restoredTo = restoredTo
    }

    /// Reads a header value; nil when it is not one (a client ignores a header it cannot read).
    public init?(header: String) {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        let id = parts[0].trimmingCharacters(in: .whitespaces)
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy(Self.isIDByte) else { return nil }
        var restoredTo: Int64?
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == "restored-to",
                let milliseconds = ProtocolDate.parse(pair[1].trimmingCharacters(in: .whitespaces))
            else { continue }
            restoredTo = milliseconds
        }
        self.init(id: id, restoredTo: restoredTo)
    }

    /// The header value.
    public var header: String {
        guard let restoredTo else { return id }
        return "\(id); restored-to=\(ProtocolDate.format(milliseconds: restoredTo))"
    }

    public var description: String { header }

    /// Letters, digits, `-` and `_`.
    private static func isIDByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
    }
}
