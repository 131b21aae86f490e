import Foundation
import HTTPServer
import HTTPTypes
import Logging
import SyncProtocol

/// The table routes' own work: list, read, insert, update, (soft) delete, and a device's bundle.
extension TableController {
    func list(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let declaration = configuration.schema.declaration(of: table)
        let queryItems = try NextPageLink.queryItems(of: request, table: table)
        // A declared page size is both the default and the most a v3 page holds (as Datasync's
        // PageSize); other tables page by the service's size without $top, and up to its maximum with it.
        var options = try QueryOptions(
            queryItems: queryItems, defaultTop: declaration?.pageSize ?? configuration.pageSize,
            maximumTop: configuration.maximumTop, rules: style.queryRules,
            pageLimit: declaration?.pageSize ?? configuration.maximumTop)
        // Without soft delete, `deleted` is an ordinary column: nothing is hidden.
        if declaration?.softDelete == false { options.includeDeleted = true }
        let position = Self.pullPosition(request, options)
        let page: TablePage
        do {
            (_, page) = try await store.page(
                options, table: table, style: style, declaration: declaration, scope: scope)
        } catch {
            if let (device, position) = position {
                fleet.notePull(device, table: table, from: position.position, rowsPast: nil)
            }
            throw error
        }
        if let (device, position) = position {
            // An inclusive bound (`ge`) answers again the row the device has at its position.
            let past = position.inclusive ? max(0, page.rows - 1) : page.rows
            fleet.notePull(device, table: table, from: position.position, rowsPast: past)
        }
        var response = style.pageEnvelope.response(
            page, options: options, request: request, queryItems: queryItems, publicURL: configuration.publicURL)
        // A client whose store still has a column under its former name renames it before storing the page.
        if let changes = declaration?.columnChanges, !changes.isEmpty {
            response.headers[ProtocolHeader.columnChanges] = changes.header
        }
        return response
    }

    func read(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let item = try await store.item(in: try tableName(request), id: try itemID(request), scope: scope)
        return itemResponse(item, style, status: .ok, request: request)
    }

    func insert(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let changes = try self.changes(request, style, table: table, inserting: true)
        let item = try await store.insert(into: table, changes, scope: scope)
        return itemResponse(item, style, status: .created, request: request)
    }

    func update(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let id = try itemID(request)
        let changes = try self.changes(request, style, table: table, of: id)
        let check = VersionCheck(
            ifMatch: ifMatch(request), bodyVersion: changes.version, bodyVersionStatus: style.isLegacy ? 412 : 409)
        let item = try await store.update(in: table, id: id, changes, check: check, scope: scope)
        return itemResponse(item, style, status: .ok, request: request)
    }

    /// DELETE soft-deletes the item (200); POST to the item brings it back (201). In a table
    /// declared without soft delete, DELETE removes the item (200 with it as it was).
    func setDeleted(
        _ deleted: Bool, _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let item: StoredItem
        if deleted, !softDeletes(table) {
            item = try await store.remove(from: table, id: try itemID(request), ifMatch: ifMatch(request), scope: scope)
        } else {
            item = try await store.setDeleted(
                deleted, in: table, id: try itemID(request), ifMatch: ifMatch(request), scope: scope)
        }
        return itemResponse(item, style, status: deleted ? .ok : .created, request: request)
    }

    /// A support bundle a device uploads because an admin asked for it (see `docs/fleet.md`).
    func receiveBundle(_ request: Request) async throws(TableError) -> Response {
        let id = try DeviceIdentity.checkedID(request.parameters["id"] ?? "")
        guard request.headers[ProtocolHeader.installationID] == id else {
            return .jsonError(
                "A device uploads its own bundle only: X-ZUMO-INSTALLATION-ID must be \(id).", status: .forbidden)
        }
        do throws(Fleet.BundleRefusal) {
            try await fleet.acceptBundle(id, request.body)
        } catch {
            switch error {
            case .notAsked:
                return .jsonError("Nobody asked for the support bundle of \(id).", status: .conflict)
            case .tooLarge:
                return .jsonError(
                    "The bundle is over \(Fleet.bundleLimit >> 20) MB: it was not kept.", status: .contentTooLarge)
            case .notAZip:
                throw .invalidRequest("The bundle is not a zip file: send the one todosync client bundle writes.")
            }
        }
        return .json(data: Data(#"{"received":true}"#.utf8), status: .created)
    }
}
