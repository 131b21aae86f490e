import Foundation
import HTTPServer
import HTTPTypes
import Logging
import SyncProtocol
import Views

/// The service's own HTML pages: its tables, each table's rows (soft-deleted ones included), and a
/// form per row that writes as another device would — a versioned PATCH with the version the page
/// showed, so that a stale form says so instead of overwriting. Forms carry a per-process CSRF
/// token; when the service has an application key, the pages ask for it once and keep a cookie.
struct ServicePage: Sendable {
    static let templates = [
        "service/header", "service/footer", "service/index", "service/table", "service/row", "service/key",
        "service/devices", "service/device", "service/devices-body", "service/escrow", "service/style.css",
    ]
    static let sessionCookie = "todosync_service_session"
    /// Rows shown per table page.
    static let rowLimit = 500

    let store: any TableStorage
    /// The devices that sync, for their pages and the installations still writing the old shape.
    let fleet: Fleet
    let alerts: FleetAlerts
    let templates: TemplateLibrary
    /// The project's `Public/` folder, for the script that makes the devices page live.
    let publicFolder: URL?
    let base: String
    let csrfToken: String
    /// Who may see the pages.
    let access: ServiceAccess
    /// Granted by the key form; random per process.
    let sessionToken: String
    /// Where a failure the user cannot fix (a 5xx) is written, for the operator.
    let logger: Logger

    func addRoutes(to router: inout Router) {
        router.get(base) { request in await self.guarded(request) { try await self.index() } }
        router.get(base + "/style.css") { _ in
            let css = self.templates.render("service/style.css", NoServiceContent())
            var response = Response(status: .ok, body: Data(css.utf8))
            response.headers[.contentType] = "text/css; charset=utf-8"
            return response
        }
        router.post(base + "/key") { request in try self.unlock(request) }
        router.get(base + "/tables/:table") { request in
            await self.guarded(request) { try await self.table(request) }
        }
        router.get(base + "/tables/:table/:id") { request in
            await self.guarded(request) {
                let (table, id) = try self.address(request)
                return try await self.row(table: table, id: id, flash: Self.flash(request))
            }
        }
        router.post(base + "/tables/:table/:id") { request in
            await self.guarded(request, form: true) { try await self.save(request) }
        }
        router.post(base + "/tables/:table/:id/delete") { request in
            await self.guarded(request, form: true) { try await self.setDeleted(request, true) }
        }
        router.post(base + "/tables/:table/:id/undelete") { request in
            await self.guarded(request, form: true) { try await self.setDeleted(request, false) }
        }
        addDeviceRoutes(to: &router)
        addEscrowRoutes(to: &router)
    }

    // MARK: Pages

    private func index() async throws -> Response {
        page(
            "service/index", title: "Tables",
            ServiceTablesPage(
                try await store.tableSummaries(), base: base, changes: try await store.schemaChanges(),
                behind: await fleet.writingOldShape(), alerts: await alerts.recent(limit: 10)))
    }

    private func table(_ request: Request) async throws -> Response {
        let (schema, items) = try await store.rows(of: request.parameters["table"] ?? "", limit: Self.rowLimit)
        return page(
            "service/table", title: schema.name,
            ServiceTablePage(schema, items: items, limit: Self.rowLimit) { rowHref(schema.name, $0) })
    }

    private func row(
        table: String, id: String, flash: ServiceFlash? = nil, conflict: ServiceRowPage.Conflict? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        guard let schema = try await store.reloadSchema(of: table),
            let item = try await store.anyItem(in: table, id: id, scope: .all)
        else {
            throw TableError.itemNotFound
        }
        let content = ServiceRowPage(
            schema, item: item, tableHref: "\(base)/tables/\(schema.name)", rowHref: rowHref(schema.name, item.id),
            conflict: conflict)
        return page("service/row", title: "\(item.id) · \(schema.name)", flash: flash, status: status, content)
    }

    // MARK: Writes

    private func save(_ request: Request) async throws -> Response {
        let (table, id) = try address(request)
        let form = try request.form()
        guard let schema = try await store.reloadSchema(of: table) else { throw TableError.itemNotFound }
        let version = form["version"] ?? ""
        var fields: [StoredItem.Field] = []
        var sent: [ServiceRowPage.SentValue] = []
        for column in schema.userColumns {
            guard let text = form["f.\(column.name)"] else { continue }
            sent.append(ServiceRowPage.SentValue(name: column.name, value: text.isEmpty ? "(empty)" : text))
            switch try Self.value(text, for: column) {
            case .some(let value): fields.append(StoredItem.Field(name: column.name, value: value))
            case .none: continue
            }
        }
        return try await versionedWrite(
            table: table, id: id, version: version, sent: sent, done: "saved",
            whenNotFound: .error("Not saved: the row is soft-deleted. Undelete it first.")
        ) { () async throws(TableError) in
            try await store.update(
                in: table, id: id, ItemChanges(id: nil, version: nil, fields: fields),
                check: VersionCheck(ifMatch: version), scope: .all)
        }
    }

    private func setDeleted(_ request: Request, _ deleted: Bool) async throws -> Response {
        let (table, id) = try address(request)
        let version = try request.form()["version"] ?? ""
        return try await versionedWrite(
            table: table, id: id, version: version, sent: [], done: deleted ? "deleted" : "undeleted"
        ) { () async throws(TableError) in
            try await store.setDeleted(deleted, in: table, id: id, ifMatch: version, scope: .all)
        }
    }

    /// Runs a form's write of the row `id` expecting `version`, then redirects to the row's page
    /// saying it is `done`. A stale version is answered with the row page naming both versions and
    /// what was `sent` (409), as is a row that is not live when `whenNotFound` says why.
    private func versionedWrite(
        table: String, id: String, version: String, sent: [ServiceRowPage.SentValue], done: String,
        whenNotFound: ServiceFlash? = nil, _ write: () async throws(TableError) -> StoredItem
    ) async throws -> Response {
        do throws(TableError) {
            _ = try await write()
            return .redirect(to: rowHref(table, id) + "?done=" + done)
        } catch .preconditionFailed(let current) {
            let conflict = ServiceRowPage.Conflict(yourVersion: version, currentVersion: current.version, sent: sent)
            return try await row(table: table, id: id, conflict: conflict, status: .conflict)
        } catch .itemNotFound where whenNotFound != nil {
            return try await row(table: table, id: id, flash: whenNotFound, status: .conflict)
        }
    }

    /// The JSON value a form field stands for, by column type; `nil` leaves the column unchanged.
    static func value(_ text: String, for column: Column) throws(TableError) -> JSONValue? {
        switch column.type {
        case .boolean:
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return .null
            }
        case .number:
            if text.trimmingCharacters(in: .whitespaces).isEmpty { return .null }
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                throw .invalidRequest(
                    "'\(text)' is not a number; \(column.name) holds numbers. Go back and correct it.")
            }
            return .number(number)
        case .unknown:
            return text.isEmpty ? .null : .string(text)
        case .string, .date:
            return .string(text)
        }
    }

    // MARK: Helpers

    /// Whether `request` carries this process's session cookie.
    func signedIn(_ request: Request) -> Bool {
        CSRFProtection.constantTimeEquals(request.cookies[Self.sessionCookie] ?? "", sessionToken)
    }

    /// Runs a page after the access check (and, for forms, the CSRF check); errors become pages.
    func guarded(
        _ request: Request, form: Bool = false, _ body: () async throws -> Response
    ) async -> Response {
        do {
            switch access.verdict(request, signedIn: signedIn(request)) {
            case .allowed: break
            case .signInNeeded: return keyPage(status: .unauthorized)
            case .refused(let message): return errorPage(.forbidden, message)
            }
            if form, let refused = refusedForm(request) { return refused }
            return try await body()
        } catch let error as any HTTPResponseError {
            logIfUnexplained(error, request)
            return errorPage(error.status, error.message)
        } catch {
            logger.error("service page \(request.method) \(request.path) failed: \(error)")
            return errorPage(.internalServerError, "The page could not be made. Please try again.")
        }
    }

    /// Logs an answered failure that is the service's, not the user's (a 5xx): its message tells
    /// the user it was logged.
    func logIfUnexplained(_ error: any HTTPResponseError, _ request: Request) {
        guard error.status.code >= 500 else { return }
        let detail = (error as? TableError).map { "\($0)" } ?? error.message
        logger.error("service page \(request.method) \(request.path) failed: \(detail)")
    }

    /// The 403 page for a form without this process's CSRF token; nil when it has it.
    private func refusedForm(_ request: Request) -> Response? {
        let sent = (try? request.form())?[CSRFProtection.fieldName] ?? ""
        if CSRFProtection.constantTimeEquals(sent, csrfToken) { return nil }
        return errorPage(
            .forbidden, "This form has expired or did not come from this page. Reload the page and try again.")
    }

    private func unlock(_ request: Request) throws -> Response {
        let form = try request.form()
        if let refused = refusedForm(request) { return refused }
        if case .refused(let message) = access.verdict(request, signedIn: false), access.adminKey == nil {
            return errorPage(.forbidden, message)
        }
        guard let expected = access.formKey, ApplicationKey.matches(form["key"] ?? "", expected.key) else {
            return keyPage(status: .unauthorized, flash: .error("That is not the key."))
        }
        var response = Response.redirect(to: base)
        response.headers[.setCookie] =
            "\(Self.sessionCookie)=\(sessionToken); Path=\(base); HttpOnly; SameSite=Strict"
        return response
    }

    /// The sign-in form, asking for the admin key (or the application key without one).
    private func keyPage(status: HTTPResponse.Status, flash: ServiceFlash? = nil) -> Response {
        let name = access.formKey?.name ?? "key"
        return page(
            "service/key", title: "Sign in", flash: flash, status: status,
            KeyPage(keyName: name, keyLabel: name.prefix(1).uppercased() + name.dropFirst()))
    }

    /// What the sign-in form names.
    struct KeyPage: Encodable, Sendable {
        var keyName: String
        var keyLabel: String
    }

    func page<Content: Encodable & Sendable>(
        _ template: String, title: String, flash: ServiceFlash? = nil, status: HTTPResponse.Status = .ok,
        _ content: Content
    ) -> Response {
        let view = ServicePageView(base: base, csrf: csrfToken, title: title, flash: flash, page: content)
        var response = templates.page(template, view, status: status)
        response.headers[.cacheControl] = "no-store"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }

    /// The list of tables' page, empty, saying what went wrong.
    func errorPage(_ status: HTTPResponse.Status, _ message: String) -> Response {
        page("service/index", title: "Error", flash: .error(message), status: status, ServiceTablesPage([], base: base))
    }

    private func address(_ request: Request) throws(TableError) -> (String, String) {
        (request.parameters["table"] ?? "", try ItemChanges.checkedID(request.parameters["id"] ?? ""))
    }

    private func rowHref(_ table: String, _ id: String) -> String {
        "\(base)/tables/\(table)/\(NextPageLink.encode(id))"
    }

    private static func flash(_ request: Request) -> ServiceFlash? {
        switch request.query("done") {
        case "saved": ServiceFlash(kind: .ok, message: "Saved: the row has a new version.")
        case "deleted": ServiceFlash(kind: .ok, message: "Soft-deleted: clients that pull will remove it.")
        case "undeleted": ServiceFlash(kind: .ok, message: "Undeleted.")
        default: nil
        }
    }
}
