import Foundation
import HTTPServer
import HTTPTypes
import Logging
import SyncProtocol

/// The HTTP side of the table protocol: checks the application key and protocol version, turns
/// requests into ``TableStorage`` calls and items into JSON, and always answers errors as JSON.
struct TableController: Sendable {
    let store: any TableStorage
    let configuration: TableService.Configuration
    let cors: CORSPolicy
    /// Checks `X-ZUMO-AUTH` when the service has sign-in configured.
    let verifier: TokenVerifier?
    let logger: Logger

    /// What a request body runs with: its protocol style and the rows its caller may touch.
    typealias Body = @Sendable (Request, ProtocolStyle, RowScope) async throws(TableError) -> Response

    /// Adds the `/tables` routes.
    func addRoutes(to router: inout Router) {
        route(.get, "/tables/:table", &router) { (request, style, scope) async throws(TableError) in
            try await self.list(request, style, scope)
        }
        route(.post, "/tables/:table", &router) { (request, style, scope) async throws(TableError) in
            try await self.insert(request, style, scope)
        }
        route(.get, "/tables/:table/:id", &router) { (request, style, scope) async throws(TableError) in
            try await self.read(request, style, scope)
        }
        route(.patch, "/tables/:table/:id", &router) { (request, style, scope) async throws(TableError) in
            try await self.update(request, style, scope)
        }
        route(.delete, "/tables/:table/:id", &router) { (request, style, scope) async throws(TableError) in
            try await self.setDeleted(true, request, style, scope)
        }
        route(.post, "/tables/:table/:id", &router) { (request, style, scope) async throws(TableError) in
            try await self.setDeleted(false, request, style, scope)
        }
        for pattern in ["/tables/:table", "/tables/:table/:id"] {
            router.options(pattern) { request in self.cors.preflight(request) }
            // Clients of a JSON protocol get JSON for a method the protocol does not have.
            router.put(pattern) { request in
                do throws(TableError) { try self.writeGuard.check(request) } catch {
                    var refused = Response.jsonError(error.message, status: error.status)
                    self.cors.decorate(request, &refused)
                    return refused
                }
                var response = Response.jsonError(
                    "PUT is not part of the table protocol: use PATCH to change an item, POST to insert one.",
                    status: .methodNotAllowed)
                response.headers[.allow] =
                    pattern.hasSuffix(":id") ? "GET, PATCH, DELETE, POST, OPTIONS" : "GET, POST, OPTIONS"
                self.cors.decorate(request, &response)
                return response
            }
        }
    }

    /// Adds one route (asynchronous: the store, and jwt-kit with sign-in, answer asynchronously).
    private func route(_ method: HTTPRequest.Method, _ pattern: String, _ router: inout Router, _ body: @escaping Body)
    {
        guard let verifier else {
            router.on(method, pattern, .async { request in await self.handle(request, user: nil, body) })
            return
        }
        router.on(
            method, pattern,
            .async { request in
                let user: String?
                do throws(TableError) {
                    try self.admit(request)
                    user = try await verifier.user(of: request)
                } catch {
                    return self.finish(request, self.errorResponse(error, .v2, request: request))
                }
                return await self.handle(request, user: user, body)
            })
    }

    // MARK: Requests

    private func list(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let queryItems = try NextPageLink.queryItems(of: request, table: table)
        let options = try QueryOptions(
            queryItems: queryItems, defaultTop: configuration.pageSize, maximumTop: configuration.maximumTop)
        let query = try await store.compile(options, table: table, style: style, scope: scope)
        let page = try await store.page(query, encoder: ItemJSONEncoder(style: style, selection: query.selection))
        var response = Response.json(data: page.body)
        if options.top > 0, page.rows == options.top {
            response.headers[.link] = NextPageLink.header(
                for: request, queryItems: queryItems, skip: options.skip + options.top,
                publicURL: configuration.publicURL)
        }
        return response
    }

    private func read(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let item = try await store.item(in: try tableName(request), id: try itemID(request), scope: scope)
        return itemResponse(item, style, status: .ok, request: request)
    }

    private func insert(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let changes = try ItemChanges(body: request.body, style: style)
        let item = try await store.insert(into: table, changes, scope: scope)
        return itemResponse(item, style, status: .created, request: request)
    }

    private func update(
        _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let table = try tableName(request)
        let id = try itemID(request)
        var changes = try ItemChanges(body: request.body, style: style)
        if let bodyID = changes.id, bodyID != id {
            throw .invalidRequest(
                "The id in the body ('\(bodyID)') differs from the id in the address ('\(id)'); an item's id cannot change."
            )
        }
        changes.id = nil
        let check = VersionCheck(
            ifMatch: ifMatch(request), bodyVersion: changes.version, bodyVersionStatus: style.isLegacy ? 412 : 409)
        let item = try await store.update(in: table, id: id, changes, check: check, scope: scope)
        return itemResponse(item, style, status: .ok, request: request)
    }

    /// DELETE soft-deletes the item (200); POST to the item brings it back (201).
    private func setDeleted(
        _ deleted: Bool, _ request: Request, _ style: ProtocolStyle, _ scope: RowScope
    ) async throws(TableError) -> Response {
        let item = try await store.setDeleted(
            deleted, in: try tableName(request), id: try itemID(request), ifMatch: ifMatch(request), scope: scope)
        return itemResponse(item, style, status: deleted ? .ok : .created, request: request)
    }

    // MARK: Helpers

    private var writeGuard: WriteGuard { WriteGuard(cors: cors) }

    /// The checks that need no token: where a write comes from, and the application key.
    private func admit(_ request: Request) throws(TableError) {
        try writeGuard.check(request)
        try checkApplicationKey(request)
    }

    /// Runs `body` after the checks (origin, key, sign-in, version); every error becomes a JSON answer.
    /// `user` is the verified token's user (the asynchronous route has checked origin and key already).
    private func handle(_ request: Request, user: String?, _ body: Body) async -> Response {
        var response: Response
        var style = ProtocolStyle.v2
        do {
            if verifier == nil { try admit(request) }
            let scope = try scope(of: request, user: user)
            style = try ProtocolStyle(request)
            response = try await body(request, style, scope)
        } catch {
            response = errorResponse(error, style, request: request)
        }
        return finish(request, response)
    }

    /// The rows the caller may touch: a per-user table needs a user and shows only theirs.
    private func scope(of request: Request, user: String?) throws(TableError) -> RowScope {
        guard let signIn = verifier?.signIn else { return .all }
        let table = request.parameters["table"] ?? ""
        guard let user else {
            if signIn.required { throw .signInRequired(table: nil) }
            if signIn.isPerUser(table) { throw .signInRequired(table: table) }
            return .all
        }
        return signIn.isPerUser(table) ? .owner(user) : .all
    }

    private func finish(_ request: Request, _ response: Response) -> Response {
        var response = response
        response.headers[.cacheControl] = "no-cache"
        cors.decorate(request, &response)
        return response
    }

    private func errorResponse(_ error: TableError, _ style: ProtocolStyle, request: Request) -> Response {
        switch error {
        case .conflict(let item), .preconditionFailed(let item), .alreadyExists(let item?):
            return itemResponse(item, style, status: error.status, request: request, forceVersion: true)
        case .storage(let failure) where failure.isLogged:
            logger.error("table service storage error on \(request.method) \(request.path): \(failure)")
            return .jsonError(error.message, status: error.status)
        default:
            return .jsonError(error.message, status: error.status)
        }
    }

    private func itemResponse(
        _ item: StoredItem, _ style: ProtocolStyle, status: HTTPResponse.Status, request: Request,
        forceVersion: Bool = false
    ) -> Response {
        var encoder = ItemJSONEncoder(style: style)
        encoder.forceVersion = forceVersion
        var response = Response.json(data: encoder.data(item), status: status)
        response.headers[.eTag] = EntityTag.header(for: item.version)
        return response
    }

    private func checkApplicationKey(_ request: Request) throws(TableError) {
        guard let expected = configuration.applicationKey else { return }
        let given = request.headers[ProtocolHeader.applicationKey] ?? ""
        guard ApplicationKey.matches(given, expected) else { throw .missingApplicationKey }
    }

    private func ifMatch(_ request: Request) -> String? {
        request.headers[.ifMatch].flatMap(EntityTag.version(from:))
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
