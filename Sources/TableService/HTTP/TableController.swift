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
    /// The devices that sync, learned from their requests.
    let fleet: Fleet

    /// What a request body runs with: its protocol style and the rows its caller may touch.
    typealias Body = @Sendable (Request, ProtocolStyle, RowScope) async throws(TableError) -> Response

    /// What a route does, and for whom: every route serves those with access, but the escrow's,
    /// which serve only a revoked user or device (what it deposits before it stops).
    enum Work: Sendable {
        case granted(Body)
        case revoked(@Sendable (Request, RevokedCaller) async throws(TableError) -> Response)
    }

    /// Adds the `/tables` routes (a group whose errors, a 404 or 405 of its paths too, are JSON),
    /// the devices' and `/openapi.json`. Each table route names what it does in each protocol; the
    /// protocol is decided once per request (``ProtocolStyle``), before the handler runs.
    func addRoutes(to router: inout Router) {
        router.group("/tables") { tables in
            tables.errorRenderer = ErrorRenderer.json
            addTableRoutes(to: &tables)
        }
        route(.post, "/devices/:id/bundle", &router) { (request, _, _) async throws(TableError) in
            try await self.receiveBundle(request)
        }
        let escrow = EscrowEndpoints(fleet: fleet)
        router.on(.post, "/devices/:id/escrow", .async(handler(.revoked(escrow.deposit)), on: store.requestExecutor))
        router.on(
            .post, "/devices/:id/wipe-receipt", .async(handler(.revoked(escrow.receipt)), on: store.requestExecutor))
        router.on(.get, "/openapi.json", .async { request in await self.openAPI(request) })
    }

    /// The routes under `/tables`, their patterns relative to it.
    private func addTableRoutes(to tables: inout Router) {
        let datasync = DatasyncItemEndpoints(controller: self)
        // Before the item routes, which would take `$changes` for an id.
        addChangeChannel(to: &tables)
        route(.get, "/:table", &tables) { (request, style, scope) async throws(TableError) in
            try await self.list(request, style, scope)
        }
        route(.post, "/:table", &tables) { (request, style, scope) async throws(TableError) in
            style == .v3 ? try await datasync.insert(request, scope) : try await self.insert(request, style, scope)
        }
        route(.get, "/:table/:id", &tables) { (request, style, scope) async throws(TableError) in
            style == .v3 ? try await datasync.read(request, scope) : try await self.read(request, style, scope)
        }
        route(.patch, "/:table/:id", &tables) { (request, style, scope) async throws(TableError) in
            guard style != .v3 else { throw DatasyncItemEndpoints.patchRefusal }
            return try await self.update(request, style, scope)
        }
        route(.delete, "/:table/:id", &tables) { (request, style, scope) async throws(TableError) in
            style == .v3
                ? try await datasync.delete(request, scope) : try await self.setDeleted(true, request, style, scope)
        }
        route(.post, "/:table/:id", &tables) { (request, style, scope) async throws(TableError) in
            guard style != .v3 else { throw DatasyncItemEndpoints.undeleteRefusal }
            return try await self.setDeleted(false, request, style, scope)
        }
        // PUT is v3's replace; other protocols get the answer they always had.
        let replace = handler(
            .granted { (request, _, scope) async throws(TableError) in try await datasync.replace(request, scope) })
        let refuseCollectionPut = handler(
            .granted { (_, _, _) async throws(TableError) in throw DatasyncItemEndpoints.collectionPutRefusal })
        for pattern in ["/:table", "/:table/:id"] {
            tables.options(pattern) { request in
                self.cors.preflight(request, allow: Self.allowedMethods(pattern, v3: ProtocolStyle.isV3(request)))
            }
            // Clients of a JSON protocol get JSON for a method the protocol does not have.
            tables.on(
                .put, pattern,
                .async { request in
                    if ProtocolStyle.isV3(request) {
                        return pattern.hasSuffix(":id") ? await replace(request) : await refuseCollectionPut(request)
                    }
                    return self.refusePut(request, pattern: pattern)
                })
        }
    }

    /// The tables in OpenAPI 3.1 (behind the application key, like the tables).
    private func openAPI(_ request: Request) async -> Response {
        var response: Response
        do throws(TableError) {
            try checkApplicationKey(request)
            let document = OpenAPIDocument.document(try await store.allSchemas(), declarations: configuration.schema)
            response = Response.json(data: document.jsonData)
        } catch {
            response = errorResponse(error, .v3, request: request)
        }
        return finish(request, response)
    }

    /// The methods of a table (`/tables/:table`) or item address in v3 (as its OpenAPI document
    /// says) or v2, for `Allow`.
    static func allowedMethods(_ pattern: String, v3: Bool) -> String {
        guard pattern.hasSuffix(":id") else { return "GET,HEAD,POST" }
        return v3 ? "GET,HEAD,PUT,DELETE" : "GET,HEAD,PATCH,DELETE,POST"
    }

    /// v2's answer to PUT, which it does not have.
    private func refusePut(_ request: Request, pattern: String) -> Response {
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

    /// Adds one route (asynchronous: the store, and jwt-kit with sign-in, answer asynchronously).
    func route(_ method: HTTPRequest.Method, _ pattern: String, _ router: inout Router, _ body: @escaping Body) {
        router.on(method, pattern, .async(handler(.granted(body)), on: store.requestExecutor))
    }

    /// The handler that runs `work` after the checks (origin, key, sign-in, version).
    private func handler(_ work: Work) -> @Sendable (Request) async -> Response {
        guard let verifier else {
            return { request in await self.handle(request, user: nil, work) }
        }
        return { request in
            let user: String?
            do throws(TableError) {
                try self.admit(request)
                user = try await verifier.user(of: request)
            } catch {
                return self.finish(request, self.errorResponse(error, .v2, request: request))
            }
            return await self.handle(request, user: user, work)
        }
    }

    // MARK: Helpers

    /// The body of a write read by the protocol's rules, its values checked against the table's
    /// declared columns.
    /// Fields under a renamed column's former name are stored under the new one, retired columns
    /// are left out, and an insert gets the declared defaults of the columns it leaves out.
    func changes(
        _ request: Request, _ style: ProtocolStyle, table: String, inserting: Bool = false
    ) throws(TableError) -> ItemChanges {
        var changes = try ItemChanges(body: request.body, style: style)
        let declaration = configuration.schema.declaration(of: table)
        try declaration?.checkFormerNames(changes.fields)
        let oldNames = declaration?.bringForward(&changes.fields) ?? []
        if inserting { declaration?.addDefaults(to: &changes.fields) }
        try declaration?.check(&changes.fields)
        if !oldNames.isEmpty, let device = request.headers[ProtocolHeader.installationID] {
            fleet.noteOldNames(device, table: table, oldNames)
        }
        return changes
    }

    /// The body's changes to the item `id` (an update, a replace): an id in the body must be `id`,
    /// and is then left out, as an item's id cannot change.
    func changes(
        _ request: Request, _ style: ProtocolStyle, table: String, of id: String
    ) throws(TableError) -> ItemChanges {
        var changes = try changes(request, style, table: table)
        if let bodyID = changes.id, bodyID != id {
            throw .invalidRequest(
                "The id in the body ('\(bodyID)') differs from the id in the address ('\(id)'); an item's id cannot change."
            )
        }
        changes.id = nil
        return changes
    }

    /// Whether DELETE keeps the row marked deleted (every table unless declared otherwise).
    func softDeletes(_ table: String) -> Bool {
        configuration.schema.declaration(of: table)?.softDelete ?? true
    }

    /// Whether a v3 PUT nulls the columns its body leaves out (only tables declared so).
    func putReplaces(_ table: String) -> Bool {
        configuration.schema.declaration(of: table)?.putReplaces ?? false
    }

    var writeGuard: WriteGuard { WriteGuard(cors: cors) }

    /// The checks that need no token: where a write comes from, and the application key.
    private func admit(_ request: Request) throws(TableError) {
        try writeGuard.check(request)
        try checkApplicationKey(request)
    }

    /// Runs `work` after the checks (origin, key, sign-in, version, access); every error becomes a
    /// JSON answer. `user` is the verified token's user (the asynchronous route has checked origin
    /// and key already).
    private func handle(_ request: Request, user: String?, _ work: Work) async -> Response {
        var response: Response
        var style = ProtocolStyle.v2
        var device: DeviceIdentity?
        do throws(TableError) {
            device = try DeviceIdentity.of(request)
            if verifier == nil { try admit(request) }
            let revoked = try await fleet.revocations.checked(user: user, device: device?.id)
            switch work {
            case .granted(let body):
                if let revoked { throw TableError.revoked(revoked) }
                let scope = try scope(of: request, user: user)
                style = try ProtocolStyle(request)
                response = try await body(request, style, scope)
            case .revoked(let body):
                guard let revoked, let device else { throw TableError.notRevoked }
                response = try await body(request, RevokedCaller(user: user, device: device.id, revocation: revoked))
            }
        } catch {
            response = errorResponse(error, style, request: request)
        }
        if let device,
            fleet.noteRequest(
                device, request, style: style, table: request.parameters["table"], user: user, response: response)
        {
            response.headers[ProtocolHeader.bundleRequest] = "1"
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
        if let epoch = store.epoch { response.headers[ProtocolHeader.epoch] = epoch.header }
        cors.decorate(request, &response)
        return response
    }

    private func errorResponse(_ error: TableError, _ style: ProtocolStyle, request: Request) -> Response {
        switch error {
        case .conflict(let item), .preconditionFailed(let item), .alreadyExists(let item?):
            return itemResponse(item, style, status: error.status, request: request, forceVersion: true)
        case .methodNotAllowed(let message, let allow):
            var response = Response.jsonError(message, status: error.status)
            response.headers[.allow] = allow
            return response
        case .tooManySubscribers:
            var response = Response.jsonError(error.message, status: error.status)
            response.headers[.retryAfter] = "5"
            return response
        case .revoked(let revocation):
            // What a client needs to act on it: that it is a revocation, of whom, and whether to wipe.
            var body = Data(#"{"error":"#.utf8)
            body += (try? JSONEncoder().encode(error.message)) ?? Data(#""revoked""#.utf8)
            body += Data(#","revoked":"#.utf8)
            body += (try? JSONEncoder().encode(revocation)) ?? Data("{}".utf8)
            body += Data("}".utf8)
            var response = Response.json(data: body)
            response.status = error.status
            return response
        case .storage(let failure) where failure.isLogged:
            logger.error("table service storage error on \(request.method) \(request.path): \(failure)")
            return .jsonError(error.message, status: error.status)
        default:
            return .jsonError(error.message, status: error.status)
        }
    }

    func itemResponse(
        _ item: StoredItem, _ style: ProtocolStyle, status: HTTPResponse.Status, request: Request,
        forceVersion: Bool = false
    ) -> Response {
        var encoder = ItemJSONEncoder(style: style)
        encoder.forceVersion = forceVersion
        var response = Response.json(data: encoder.data(item), status: status)
        response.headers[.eTag] = EntityTag.header(for: item.version)
        if style == .v3 { response.headers[.lastModified] = HTTPDate.format(milliseconds: item.updatedAt) }
        return response
    }

    private func checkApplicationKey(_ request: Request) throws(TableError) {
        guard let expected = configuration.applicationKey else { return }
        let given = request.headers.value(ProtocolHeader.applicationKey) ?? ""
        guard ApplicationKey.matches(given, expected) else { throw .missingApplicationKey }
    }

    /// The device and position of an incremental pull (a list request whose filter bounds
    /// `updatedAt` from below), and whether the bound is inclusive; nil for other requests.
    static func pullPosition(
        _ request: Request, _ options: QueryOptions
    ) -> (
        String, (position: PullPosition, inclusive: Bool)
    )? {
        guard let device = request.headers[ProtocolHeader.installationID], let filter = options.filter,
            filter.range(of: "updatedat", options: .caseInsensitive) != nil,
            let expression = try? FilterParser.parse(filter),
            let position = PullPosition(filter: expression, skip: options.skip)
        else { return nil }
        return (device, (position, PullPosition.isInclusive(expression)))
    }

    func ifMatch(_ request: Request) -> String? {
        request.headers.value(.ifMatch).flatMap(EntityTag.version(from:))
    }

    func tableName(_ request: Request) throws(TableError) -> String {
        let name = request.parameters["table"] ?? ""
        guard TableService.isValidTableName(name) else {
            throw .invalidRequest(
                "'\(name)' is not a table name: use up to 64 letters, digits and underscores, starting with a letter "
                    + "(and not with sqlite_).")
        }
        return name
    }

    func itemID(_ request: Request) throws(TableError) -> String {
        try ItemChanges.checkedID(request.parameters["id"] ?? "")
    }
}
