import Foundation
import SyncProtocol

extension HTTPTransport {
    /// Which protocol the service speaks, asked with one row of `table`: as v2 first (the official
    /// Mobile Apps server refuses any other version; a Datasync server ignores the header and answers
    /// a v3 page, `{items, …}`), then as v3 when v2 was refused. Nil when neither answered a page
    /// (no such table, say): the sync then reports the service's own answer.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the service cannot be reached or refuses access.
    func detectProtocol(table: String) async throws(SyncError) -> TableProtocol? {
        let path = path(table: table)
        let asV2 = try await speaking(.v2).send(.get, path, query: [("$top", "1")], for: .protocolProbe(table: table))
        if asV2.status.kind == .successful { return Self.isV3Page(asV2.body) ? .v3 : .v2 }
        if let refusal = asV2.stopReason, case .notAuthorized = refusal { throw .stopped(refusal) }
        let asV3 = try await speaking(.v3).send(.get, path, query: [("$top", "1")], for: .protocolProbe(table: table))
        return asV3.status.kind == .successful && Self.isV3Page(asV3.body) ? .v3 : nil
    }

    /// Whether `body` is a Datasync page: a JSON object with an `items` member.
    static func isV3Page(_ body: Data) -> Bool {
        guard let members = try? OrderedJSONParser.object(Array(body), maximumDepth: ItemCoding.maximumDepth) else {
            return false
        }
        return members.contains { $0.name == "items" }
    }
}
