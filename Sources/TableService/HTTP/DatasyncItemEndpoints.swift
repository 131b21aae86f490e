import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// The item routes of Datasync v3, over the same store and tables as v2: POST answers 201 with
/// `Location`, PUT replaces the item (the columns its body leaves out keep their values unless the
/// table is declared `putReplaces`), DELETE answers 204, a soft-deleted item is 410 unless
/// the query has `__includedeleted=true`, and `If-Match`/`If-None-Match` are read as
/// ``Preconditions``. Lists go through the shared ``TableController`` path with v3's rules.
struct DatasyncItemEndpoints: Sendable {
    let controller: TableController

    private var store: any TableStorage { controller.store }

    /// The methods of a v3 item.
    static let itemMethods = "GET, PUT, DELETE, OPTIONS"

    /// v3 has no PATCH.
    static let patchRefusal = TableError.methodNotAllowed(
        "PATCH is not part of Datasync v3: replace the whole item with PUT (or send ZUMO-API-VERSION: 2.0.0 to patch).",
        allow: itemMethods)
    /// Nor POST to an item (v2's undelete).
    static let undeleteRefusal = TableError.methodNotAllowed(
        "POST to an item is not part of Datasync v3: insert with POST /tables/{table}, replace with PUT.",
        allow: itemMethods)
    /// PUT goes to an item.
    static let collectionPutRefusal = TableError.methodNotAllowed(
        "PUT replaces one item: send it to /tables/{table}/{id}; insert with POST /tables/{table}.",
        allow: "GET, POST, OPTIONS")

    // MARK: Routes

    func read(_ request: Request, _ scope: RowScope) async throws(TableError) -> Response {
        let table = try controller.tableName(request)
        let current = try await visibleItem(table, try controller.itemID(request), request, scope)
        let preconditions = Preconditions(request)
        if let failure = preconditions.failure(reading: current) { throw failure }
        if preconditions.isNotModified(current) {
            var response = Response(status: .notModified)
            response.headers[.eTag] = EntityTag.header(for: current.version)
            response.headers[.lastModified] = HTTPDate.format(milliseconds: current.updatedAt)
            return response
        }
        return controller.itemResponse(current, .v3, status: .ok, request: request)
    }

    func insert(_ request: Request, _ scope: RowScope) async throws(TableError) -> Response {
        let table = try controller.tableName(request)
        let changes = try controller.changes(request, .v3, table: table, inserting: true)
        let item = try await store.insert(into: table, changes, scope: scope)
        var response = controller.itemResponse(item, .v3, status: .created, request: request)
        if let location = location(of: item, request) { response.headers[.location] = location }
        return response
    }

    func replace(_ request: Request, _ scope: RowScope) async throws(TableError) -> Response {
        let table = try controller.tableName(request)
        let id = try controller.itemID(request)
        var changes = try controller.changes(request, .v3, table: table, of: id)
        var current = try await visibleItem(table, id, request, scope)
        let preconditions = try await self.preconditions(request, table, current)
        if let failure = preconditions.failure(writing: current) { throw failure }
        var expected = preconditions.expectedVersion(of: current)
        if current.deleted {
            // Shown by __includedeleted=true: replacing it brings it back (two writes, each checked
            // against the version the previous one left).
            current = try await store.setDeleted(false, in: table, id: id, ifMatch: expected, scope: scope)
            expected = current.version
        }
        // Columns the body leaves out keep their values: the client (an older app) may not know
        // them. A table declared `putReplaces` nulls them, as the toolkit does (the columns this
        // instance knows; one another instance has just added keeps its value).
        if controller.putReplaces(table) {
            let sent = Set(changes.fields.map { $0.name.lowercased() })
            for column in store.schema(of: table)?.userColumns ?? [] where !sent.contains(column.name.lowercased()) {
                changes.fields.append(StoredItem.Field(name: column.name, value: .null))
            }
        }
        let item = try await store.update(
            in: table, id: id, changes, check: VersionCheck(ifMatch: expected), scope: scope)
        return controller.itemResponse(item, .v3, status: .ok, request: request)
    }

    func delete(_ request: Request, _ scope: RowScope) async throws(TableError) -> Response {
        let table = try controller.tableName(request)
        let id = try controller.itemID(request)
        guard let current = try await store.anyItem(in: table, id: id, scope: scope) else { throw .itemNotFound }
        if current.deleted { throw .gone }
        let preconditions = try await self.preconditions(request, table, current)
        if let failure = preconditions.failure(writing: current) { throw failure }
        let expected = preconditions.expectedVersion(of: current)
        if controller.softDeletes(table) {
            _ = try await store.setDeleted(true, in: table, id: id, ifMatch: expected, scope: scope)
        } else {
            _ = try await store.remove(from: table, id: id, ifMatch: expected, scope: scope)
        }
        return Response(status: .noContent)
    }

    // MARK: Helpers

    /// The request's conditional headers, an `If-Match` of the version `current` had before a
    /// schema backfill stamped it counting as its own (looked up only when it does not match).
    private func preconditions(
        _ request: Request, _ table: String, _ current: StoredItem
    ) async throws(TableError) -> Preconditions {
        let preconditions = Preconditions(request)
        guard let ifMatch = preconditions.ifMatch, !ifMatch.match(current) else { return preconditions }
        return preconditions.accepting(
            versionBeforeBackfill: try await store.versionBeforeBackfill(in: table, current), of: current)
    }

    /// The item `id`, soft-deleted ones only with `__includedeleted=true` (else 410); 404 when missing.
    private func visibleItem(
        _ table: String, _ id: String, _ request: Request, _ scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard let item = try await store.anyItem(in: table, id: id, scope: scope) else { throw .itemNotFound }
        let includeDeleted = request.queryItems.first { $0.name.lowercased() == "__includedeleted" }?.value
        if item.deleted, includeDeleted?.lowercased() != "true" { throw .gone }
        return item
    }

    /// `Location`: the table's address and the new item's id, from the public URL or `Host`.
    private func location(of item: StoredItem, _ request: Request) -> String? {
        let origin: String
        if let publicURL = controller.configuration.publicURL {
            origin = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        } else if let host = request.authority, NextPageLink.isPlausibleHost(host) {
            origin = "http://" + host
        } else {
            return nil
        }
        let path = (request.pathSegments + [item.id]).map { NextPageLink.encode($0) }.joined(separator: "/")
        return origin + "/" + path
    }
}
