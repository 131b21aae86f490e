import Foundation
import HTTPServer
import Logging
import SyncProtocol

/// The HTTP side of the table protocol: checks the application key and protocol version, turns
/// requests into ``TableStore`` calls and items into JSON, and always answers errors as JSON.
struct TableController: Sendable {
    let store: TableStore
    let configuration: TableService.Configuration
    let cors: CORSPolicy
    let logger: Logger

    /// Adds the `/tables` routes.
    func addRoutes(to router: inout Router) {
        router.get("/tables/:table") { request in
            self.handle(request) { (style) throws(TableError) in try self.list(request, style) }
        }
        router.post("/tables/:table") { request in
            self.handle(request) { (style) throws(TableError) in try self.insert(request, style) }
        }
        router.get("/tables/:table/:id") { request in
            self.handle(request) { (style) throws(TableError) in try self.read(request, style) }
        }
        router.patch("/tables/:table/:id") { request in
            self.handle(request) { (style) throws(TableError) in try self.update(request, style) }
        }
        router.delete("/tables/:table/:id") { request in
            self.handle(request) { (style) throws(TableError) in try self.delete(request, style) }
        }
        router.post("/tables/:table/:id") { request in
            self.handle(request) { (style) throws(TableError) in try self.undelete(request, style) }
        }
        for pattern in ["/tables/:table", "/tables/:table/:id"] {
            router.options(pattern) { request in self.cors.preflight(request) }
            // Clients of a JSON protocol get JSON for a method the protocol does not have.
            router.put(pattern) { request in
                var response = Response.jsonError(
                    "PUT is not part of the table protocol: use PATCH to change an item, POST to insert one.",
                    status: 405)
                response.headers["Allow"] =
                    pattern.hasSuffix(":id") ? "GET, PATCH, DELETE, POST, OPTIONS" : "GET, POST, OPTIONS"
                self.cors.decorate(request, &response)
                return response
            }
        }
    }

    // MARK: Requests

    private func list(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let table = try tableName(request)
        let options = try QueryOptions(
            queryItems: request.queryItems, defaultTop: configuration.pageSize, maximumTop: configuration.maximumTop)
        guard let schema = store.registry.schema(of: table) else { throw .tableNotFound(table) }
        let query = try QueryCompiler.compile(options, schema: schema, resolve: style.resolver(for: schema))
        let page = try store.page(query, encoder: ItemJSONEncoder(style: style, selection: query.selection))
        var response = Response.json(data: page.body)
        if options.top > 0, page.rows == options.top {
            response.headers["Link"] = NextPageLink.header(
                for: request, skip: options.skip + options.top, publicURL: configuration.publicURL)
        }
        return response
    }

    private func read(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let item = try store.item(in: try tableName(request), id: try itemID(request))
        return itemResponse(item, style, status: 200, request: request)
    }

    private func insert(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let table = try tableName(request)
        let changes = try ItemChanges(body: request.body, style: style)
        let item = try store.insert(into: table, changes)
        return itemResponse(item, style, status: 201, request: request)
    }

    private func update(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let table = try tableName(request)
        let id = try itemID(request)
        var changes = try ItemChanges(body: request.body, style: style)
        if let bodyID = changes.id, bodyID != id {
            throw .invalidRequest(
                "The id in the body ('\(bodyID)') differs from the id in the address ('\(id)'); an item's id cannot change."
            )
        }
        changes.id = nil
        let item = try store.update(
            in: table, id: id, changes, ifMatch: ifMatch(request), bodyVersionStatus: style.isLegacy ? 412 : 409)
        return itemResponse(item, style, status: 200, request: request)
    }

    private func delete(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let item = try store.delete(from: try tableName(request), id: try itemID(request), ifMatch: ifMatch(request))
        return itemResponse(item, style, status: 200, request: request)
    }

    private func undelete(_ request: Request, _ style: ProtocolStyle) throws(TableError) -> Response {
        let item = try store.undelete(in: try tableName(request), id: try itemID(request), ifMatch: ifMatch(request))
        return itemResponse(item, style, status: 201, request: request)
    }

    // MARK: Helpers

    /// Runs `body` after the key and version checks; every error becomes a JSON answer.
    private func handle(_ request: Request, _ body: (ProtocolStyle) throws(TableError) -> Response) -> Response {
        var response: Response
        var style = ProtocolStyle.v2
        do {
            try checkApplicationKey(request)
            style = try ProtocolStyle(request)
            response = try body(style)
        } catch {
            response = errorResponse(error, style, request: request)
        }
        response.headers["Cache-Control"] = "no-cache"
        cors.decorate(request, &response)
        return response
    }

    private func errorResponse(_ error: TableError, _ style: ProtocolStyle, request: Request) -> Response {
        switch error {
        case .conflict(let item), .preconditionFailed(let item):
            return itemResponse(item, style, status: error.status, request: request, forceVersion: true)
        case .storage(let detail):
            logger.error("table service storage error on \(request.method) \(request.path): \(detail)")
            return .jsonError(error.message, status: error.status)
        default:
            return .jsonError(error.message, status: error.status)
        }
    }

    private func itemResponse(
        _ item: StoredItem, _ style: ProtocolStyle, status: Int, request: Request, forceVersion: Bool = false
    ) -> Response {
        var encoder = ItemJSONEncoder(style: style)
        encoder.forceVersion = forceVersion
        var response = Response.json(data: encoder.data(item), status: status)
        response.headers["ETag"] = EntityTag.header(for: item.version)
        return response
    }

    private func checkApplicationKey(_ request: Request) throws(TableError) {
        guard let expected = configuration.applicationKey else { return }
        let given = request.headers[ProtocolHeader.applicationKey] ?? ""
        guard ApplicationKey.matches(given, expected) else { throw .missingApplicationKey }
    }

    private func ifMatch(_ request: Request) -> String? {
        request.headers["If-Match"].flatMap(EntityTag.version(from:))
    }

    private func tableName(_ request: Request) throws(TableError) -> String {
        let name = request.parameters["table"] ?? ""
        guard TableService.isValidTableName(name) else {
            throw .invalidRequest(
                "'\(name)' is not a table name: use up to 64 letters, digits and underscores, starting with a letter "
                    + "(and not with sqlite_).")
        }
        return name
    }

    private func itemID(_ request: Request) throws(TableError) -> String {
        try ItemChanges.checkedID(request.parameters["id"] ?? "")
    }
}
