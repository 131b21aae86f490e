import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// The escrow (`docs/fleet.md#revoking-access`): the changes revoked devices deposited, which the
/// admin applies — through the normal write path, a version conflict reported, never forced — or
/// discards, from the API or from `/service/escrow`.
extension ServicePage {
    func addEscrowRoutes(to router: inout Router) {
        router.get(base + "/api/escrow") { request in
            await self.api(request) { try Self.json(EscrowAnswer(escrow: try await self.fleet.escrow.entries())) }
        }
        router.post(base + "/api/escrow/:entry/apply") { request in
            await self.api(request) {
                switch try await self.applyEscrow(try await self.escrowEntry(request)) {
                case .applied(let entry, let stored):
                    return try Self.json(EscrowApplied(applied: entry.id, item: Self.itemJSON(stored)))
                case .conflict(let entry, let current, let reason):
                    var response = try Self.json(
                        EscrowConflict(error: reason, escrowed: entry.item, current: current.map(Self.itemJSON)))
                    response.status = .conflict
                    return response
                }
            }
        }
        router.post(base + "/api/escrow/:entry/discard") { request in
            await self.api(request) {
                let entry = try await self.escrowEntry(request)
                _ = try await self.fleet.escrow.remove(entry.id)
                return try Self.json(["discarded": entry.id])
            }
        }
        router.get(base + "/escrow") { request in
            await self.guarded(request) { try await self.escrowPage(flash: Self.escrowFlash(request)) }
        }
        router.post(base + "/escrow/:entry/apply") { request in
            await self.guarded(request, form: true) {
                switch try await self.applyEscrow(try await self.escrowEntry(request)) {
                case .applied: return .redirect(to: self.base + "/escrow?done=applied")
                case .conflict(_, let current, let reason):
                    // The escrowed values are in the entry's row; the service's go with the message.
                    let held =
                        current.map {
                            " The service holds " + Self.valueLines(Self.itemJSON($0)).joined(separator: ", ") + "."
                        } ?? ""
                    return try await self.escrowPage(flash: .error(reason + held), status: .conflict)
                }
            }
        }
        router.post(base + "/escrow/:entry/discard") { request in
            await self.guarded(request, form: true) {
                _ = try await self.fleet.escrow.remove(try await self.escrowEntry(request).id)
                return .redirect(to: self.base + "/escrow?done=discarded")
            }
        }
    }

    /// What applying an entry did.
    enum EscrowOutcome {
        /// Written (the stored item), and out of escrow.
        case applied(EscrowEntry, StoredItem)
        /// Not written: the row changed since the device read it, or is gone; the entry stays held.
        case conflict(EscrowEntry, current: StoredItem?, reason: String)
    }

    /// Applies `entry` as its device would have pushed it, as its user, then removes it from escrow.
    func applyEscrow(_ entry: EscrowEntry) async throws -> EscrowOutcome {
        let scope: RowScope =
            fleet.perUserTables.contains(entry.table.lowercased()) ? entry.user.map(RowScope.owner) ?? .all : .all
        let changes = try Self.changes(of: entry)
        let written: Result<StoredItem, TableError>
        do throws(TableError) {
            written = .success(try await write(entry, changes, scope: scope))
        } catch {
            written = .failure(error)
        }
        let stale =
            "Not applied: the row changed on the service since the device read it. Both values are shown; edit the "
            + "row, then discard the entry."
        switch written {
        case .success(let stored):
            _ = try await fleet.escrow.remove(entry.id)
            return .applied(entry, stored)
        case .failure(.preconditionFailed(let current)):
            return .conflict(entry, current: current, reason: stale)
        case .failure(.conflict(let current)):
            return .conflict(entry, current: current, reason: stale)
        case .failure(.alreadyExists(let current)):
            return .conflict(
                entry, current: current,
                reason: "Not applied: a row with this id exists already. Both values are shown.")
        case .failure(.itemNotFound):
            return .conflict(
                entry, current: try await store.anyItem(in: entry.table, id: entry.itemID, scope: scope),
                reason: "Not applied: the row is deleted or gone from the service. Undelete it first, or discard the "
                    + "entry.")
        case .failure(let error):
            throw error
        }
    }

    /// The write `entry` stands for, as its device would have sent it.
    private func write(
        _ entry: EscrowEntry, _ changes: ItemChanges, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        switch entry.operation {
        case "insert":
            try await store.insert(into: entry.table, changes, scope: scope)
        case "update":
            try await store.update(
                in: entry.table, id: entry.itemID, ItemChanges(id: nil, version: nil, fields: changes.fields),
                check: VersionCheck(ifMatch: changes.version), scope: scope)
        default:
            try await store.setDeleted(true, in: entry.table, id: entry.itemID, ifMatch: changes.version, scope: scope)
        }
    }

    /// The entry's item as a write's body: its user columns, its id and the version it expects.
    private static func changes(of entry: EscrowEntry) throws(TableError) -> ItemChanges {
        var object: [String: JSONValue] = [:]
        if case .object(let members)? = entry.item { object = members }
        for name in ["createdAt", "updatedAt", "deleted"] {
            object[name] = nil
            object[SystemColumn.legacyName(name)] = nil
        }
        object["id"] = .string(entry.itemID)
        if entry.operation == "insert" { object["version"] = nil }
        return try ItemChanges(object: object, style: .v2)
    }

    private func escrowEntry(_ request: Request) async throws -> EscrowEntry {
        let id = request.parameters["entry"] ?? ""
        guard let entry = try await fleet.escrow.entry(id) else {
            throw HTTPError(.notFound, "No escrow entry '\(id)': it was applied or discarded already.")
        }
        return entry
    }

    private func escrowPage(flash: ServiceFlash?, status: HTTPResponse.Status = .ok) async throws -> Response {
        await fleet.loadIfNeeded()
        return page(
            "service/escrow", title: "Escrow", flash: flash, status: status,
            ServiceEscrowPage(
                entries: try await fleet.escrow.entries(), receipts: try await fleet.escrow.receipts(),
                revocations: fleet.revocations.all(), devices: fleet.state.withLock { Array($0.devices.values) },
                base: base))
    }

    private static func escrowFlash(_ request: Request) -> ServiceFlash? {
        switch request.query("done") {
        case "applied": ServiceFlash(kind: .ok, message: "Applied: the change is on the service, out of escrow.")
        case "discarded": ServiceFlash(kind: .ok, message: "Discarded: the change is dropped.")
        default: nil
        }
    }

    /// `name: value` of each member of `item` (an object) but the system columns, sorted by name.
    static func valueLines(_ item: JSONValue?) -> [String] {
        guard case .object(let members)? = item else { return [] }
        let system: Set = ["id", "createdAt", "updatedAt", "deleted"]
        return members.keys.sorted().filter { !system.contains($0) }.map { "\($0): \(members[$0]!.jsonText)" }
    }

    static func itemJSON(_ item: StoredItem) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: ItemJSONEncoder(style: .v2).data(item))) ?? .null
    }

    private struct EscrowAnswer: Encodable {
        var escrow: [EscrowEntry]
    }

    private struct EscrowApplied: Encodable {
        var applied: String
        var item: JSONValue?
    }

    private struct EscrowConflict: Encodable {
        var error: String
        var escrowed: JSONValue?
        var current: JSONValue?
    }
}
