import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Views

/// The service's own HTML pages: its tables, each table's rows (soft-deleted ones included), and a
/// form per row that writes as another device would — a versioned PATCH with the version the page
/// showed, so that a stale form says so instead of overwriting. Forms carry a per-process CSRF
/// token; when the service has an application key, the pages ask for it once and keep a cookie.
struct ServicePage: Sendable {
    static let templates = [
        "service/header", "service/footer", "service/index", "service/table", "service/row", "service/key",
        "service/style.css",
    ]
    static let sessionCookie = "todosync_service_session"
    /// Rows shown per table page.
    static let rowLimit = 500

    let store: any TableStorage
    let templates: TemplateLibrary
    let base: String
    let csrfToken: String
    let applicationKey: String?
    /// Granted by the key form; random per process.
    let sessionToken: String

    func addRoutes(to router: inout Router) {
        router.get(base) { request in await self.guarded(request) { try await self.index() } }
        router.get(base + "/style.css") { _ in
            var response = Response(status: .ok, body: Data(self.templates.render("service/style.css", [:]).utf8))
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
    }

    // MARK: Pages

    private func index() async throws -> Response {
        let tables = try await store.tableSummaries().map { summary -> [String: Any] in
            [
                "name": summary.schema.name, "href": "\(base)/tables/\(summary.schema.name)", "live": summary.live,
                "deleted": summary.deleted, "columns": summary.schema.userColumns.map(\.name).joined(separator: ", "),
            ]
        }
        return page("service/index", ["title": "Tables", "tables": tables, "hasTables": !tables.isEmpty])
    }

    private func table(_ request: Request) async throws -> Response {
        let name = request.parameters["table"] ?? ""
        let (schema, items) = try await store.rows(of: name, limit: Self.rowLimit)
        let rows = items.map { item -> [String: Any] in
            var cells: [[String: Any]] = [
                ["text": item.id, "mono": true],
                ["text": ProtocolDate.format(milliseconds: item.updatedAt), "mono": true],
                ["text": item.version, "mono": true], ["text": item.deleted ? "true" : "false"],
            ]
            for field in item.fields {
                cells.append([
                    "text": field.value.isNull ? "null" : field.value.description, "isNull": field.value.isNull,
                ])
            }
            return ["cells": cells, "deleted": item.deleted, "href": rowHref(schema.name, item.id)]
        }
        let summary =
            items.count == Self.rowLimit ? "The \(Self.rowLimit) most recently changed rows." : "\(items.count) rows."
        return page(
            "service/table",
            [
                "title": schema.name, "table": schema.name, "rows": rows, "hasRows": !rows.isEmpty, "summary": summary,
                "columns": ["id", "updatedAt", "version", "deleted"] + schema.userColumns.map(\.name),
            ])
    }

    private func row(
        table: String, id: String, flash: [String: String]? = nil, conflict: [String: Any]? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        guard let schema = try await store.reloadSchema(of: table),
            let item = try await store.anyItem(in: table, id: id, scope: .all)
        else {
            throw TableError.itemNotFound
        }
        let fields = item.fields.map { field -> [String: Any] in
            let column = schema.column(named: field.name) ?? Column(name: field.name, type: .unknown, isSystem: false)
            return [
                "name": column.name, "type": column.type.rawValue, "isBoolean": column.type == .boolean,
                "value": field.value.isNull ? "" : field.value.description, "isNull": field.value.isNull,
                "isTrue": field.value == .bool(true), "isFalse": field.value == .bool(false),
            ]
        }
        var context: [String: Any] = [
            "title": "\(item.id) · \(schema.name)", "table": schema.name, "tableHref": "\(base)/tables/\(schema.name)",
            "rowHref": rowHref(schema.name, item.id),
            "fields": fields,
            "item": [
                "id": item.id, "version": item.version, "deleted": item.deleted,
                "createdAt": ProtocolDate.format(milliseconds: item.createdAt),
                "updatedAt": ProtocolDate.format(milliseconds: item.updatedAt),
            ] as [String: Any],
        ]
        if let flash { context["flash"] = flash }
        if let conflict { context["conflict"] = conflict }
        return page("service/row", context, status: status)
    }

    // MARK: Writes

    private func save(_ request: Request) async throws -> Response {
        let (table, id) = try address(request)
        let form = try request.form()
        guard let schema = try await store.reloadSchema(of: table) else { throw TableError.itemNotFound }
        let version = form["version"] ?? ""
        var fields: [StoredItem.Field] = []
        var sent: [[String: String]] = []
        for column in schema.userColumns {
            guard let text = form["f.\(column.name)"] else { continue }
            sent.append(["name": column.name, "value": text.isEmpty ? "(empty)" : text])
            switch try Self.value(text, for: column) {
            case .some(let value): fields.append(StoredItem.Field(name: column.name, value: value))
            case .none: continue
            }
        }
        let outcome: Result<StoredItem, TableError>
        do {
            outcome = .success(
                try await store.update(
                    in: table, id: id, ItemChanges(id: nil, version: nil, fields: fields),
                    check: VersionCheck(ifMatch: version), scope: .all))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success: break
        case .failure(.preconditionFailed(let current)):
            return try await row(
                table: table, id: id,
                conflict: ["yourVersion": version, "currentVersion": current.version, "sent": sent], status: .conflict)
        case .failure(.itemNotFound):
            return try await row(
                table: table, id: id,
                flash: ["kind": "error", "message": "Not saved: the row is soft-deleted. Undelete it first."],
                status: .conflict)
        case .failure(let error):
            throw error
        }
        return .redirect(to: rowHref(table, id) + "?done=saved")
    }

    private func setDeleted(_ request: Request, _ deleted: Bool) async throws -> Response {
        let (table, id) = try address(request)
        let version = try request.form()["version"] ?? ""
        let outcome: Result<StoredItem, TableError>
        do {
            outcome = .success(try await store.setDeleted(deleted, in: table, id: id, ifMatch: version, scope: .all))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success: break
        case .failure(.preconditionFailed(let current)):
            return try await row(
                table: table, id: id,
                conflict: ["yourVersion": version, "currentVersion": current.version, "sent": [[String: String]]()],
                status: .conflict)
        case .failure(let error):
            throw error
        }
        return .redirect(to: rowHref(table, id) + (deleted ? "?done=deleted" : "?done=undeleted"))
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

    /// Runs a page after the key check (and, for forms, the CSRF check); errors become pages.
    private func guarded(
        _ request: Request, form: Bool = false, _ body: () async throws -> Response
    ) async -> Response {
        do {
            if form {
                let sent = (try? request.form())?[CSRFProtection.fieldName] ?? ""
                guard CSRFProtection.constantTimeEquals(sent, csrfToken) else {
                    return errorPage(
                        .forbidden,
                        "This form has expired or did not come from this page. Reload the page and try again.")
                }
            }
            if applicationKey != nil,
                !CSRFProtection.constantTimeEquals(request.cookies[Self.sessionCookie] ?? "", sessionToken)
            {
                return page("service/key", ["title": "Application key"], status: .unauthorized)
            }
            return try await body()
        } catch let error as any HTTPResponseError {
            return errorPage(error.status, error.message)
        } catch {
            return errorPage(.internalServerError, "The page could not be made. Please try again.")
        }
    }

    private func unlock(_ request: Request) throws -> Response {
        let form = try request.form()
        guard CSRFProtection.constantTimeEquals(form[CSRFProtection.fieldName] ?? "", csrfToken) else {
            return errorPage(
                .forbidden, "This form has expired or did not come from this page. Reload the page and try again.")
        }
        guard let applicationKey, ApplicationKey.matches(form["key"] ?? "", applicationKey) else {
            var response = page(
                "service/key",
                ["title": "Application key", "flash": ["kind": "error", "message": "That is not the key."]],
                status: .unauthorized
            )
            response.headers[.cacheControl] = "no-store"
            return response
        }
        var response = Response.redirect(to: base)
        response.headers[.setCookie] =
            "\(Self.sessionCookie)=\(sessionToken); Path=\(base); HttpOnly; SameSite=Strict"
        return response
    }

    private func page(_ template: String, _ context: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        var full = context
        full["base"] = base
        full["csrf"] = csrfToken
        var response = templates.page(template, full, status: status)
        response.headers[.cacheControl] = "no-store"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }

    private func errorPage(_ status: HTTPResponse.Status, _ message: String) -> Response {
        page(
            "service/index",
            [
                "title": "Error", "flash": ["kind": "error", "message": message], "tables": [[String: Any]](),
                "hasTables": false,
            ], status: status)
    }

    private func address(_ request: Request) throws(TableError) -> (String, String) {
        (request.parameters["table"] ?? "", try ItemChanges.checkedID(request.parameters["id"] ?? ""))
    }

    private func rowHref(_ table: String, _ id: String) -> String {
        "\(base)/tables/\(table)/\(NextPageLink.encode(id))"
    }

    private static func flash(_ request: Request) -> [String: String]? {
        switch request.query("done") {
        case "saved": ["kind": "ok", "message": "Saved: the row has a new version."]
        case "deleted": ["kind": "ok", "message": "Soft-deleted: clients that pull will remove it."]
        case "undeleted": ["kind": "ok", "message": "Undeleted."]
        default: nil
        }
    }
}
