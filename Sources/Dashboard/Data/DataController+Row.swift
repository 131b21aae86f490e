import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// One row's page and its writes: Save, the list's checkboxes, and Delete (asked first).
extension DataController {
    /// The row of the request's `:id` in the preset's table; an unknown table or row is a 404 naming it.
    func row(_ request: Request, _ preset: TablePreset) throws(HTTPError) -> (TableDescription, Item, String) {
        let table = try table(preset)
        let id = request.parameters["id"] ?? ""
        let context = environment.context
        guard let item = try storeCall({ () throws(SyncError) in try context.table(table.name).item(id: id) }) else {
            throw HTTPError(
                .notFound,
                "There is no \(preset.noun) with the id “\(id)” in \(table.name). It may have been deleted, or not "
                    + "pulled yet.")
        }
        return (table, item, id)
    }

    func show(
        _ request: Request, _ preset: TablePreset, invalid: RecordForm.Invalid? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        environment.renderer.page(
            "data/record", request, section: preset.section, status: status,
            try recordContent(request, preset, invalid: invalid))
    }

    /// What the row's page shows (the stored values, or the refused ones as typed): the page and
    /// its live fragments are both rendered from it.
    func recordContent(
        _ request: Request, _ preset: TablePreset, invalid: RecordForm.Invalid? = nil
    ) throws(HTTPError) -> DataRecordPage {
        let (table, item, id) = try row(request, preset)
        return DataRecordPage(
            heading: preset.labelColumn == nil ? "Edit a row of \(table.name)" : "Edit \(preset.noun)",
            title: preset.title, table: table.name, noun: preset.noun, name: preset.name(item, id: id),
            listHref: preset.listPath, id: id, href: preset.href(id), version: item[SystemColumn.version]?.stringValue,
            updatedAt: Display.date(item[SystemColumn.updatedAt]).nilIfEmpty,
            fields: RecordForm.fields(table, item: item, invalid: invalid),
            newColumn: preset.labelColumn == nil ? RecordForm.newColumn(table, invalid: invalid) : nil,
            error: invalid?.summary,
            operation: PendingChange.latest(environment.context, table: table.name, id: id))
    }

    func save(_ request: Request, _ preset: TablePreset) async throws -> Response {
        let (table, item, id) = try row(request, preset)
        switch RecordForm.changes(try request.form(), table: table, current: item) {
        case .failure(let invalid):
            return try show(request, preset, invalid: invalid, status: .unprocessableContent)
        case .success(let changes):
            guard !changes.isEmpty else {
                environment.sessions.flash(request, .info, "Nothing changed in \(preset.name(item, id: id)).")
                return .redirect(to: preset.href(id))
            }
            try await update(table, id: id, changes)
            environment.sessions.flash(
                request, .success,
                "Saved \(changes.keys.sorted().joined(separator: ", ")) of \(preset.name(item, id: id)) locally — "
                    + "\(environment.pendingSummary()).")
            return .redirect(to: preset.listPath)
        }
    }

    /// A list's checkbox: sets one true/false column, then back to the list at the row.
    func set(_ request: Request, _ preset: TablePreset) async throws -> Response {
        let (table, item, id) = try row(request, preset)
        let form = try request.form()
        let column = form["column"] ?? ""
        guard table.columnType(column) == .boolean else {
            throw HTTPError(.badRequest, "“\(column)” is not a true/false column of \(table.name).")
        }
        guard let value = ["true": true, "false": false][form["value"] ?? ""] else {
            throw HTTPError(.badRequest, "Send value=true or value=false.")
        }
        try await update(table, id: id, [column: .bool(value)])
        environment.sessions.flash(
            request, .success,
            "Marked \(preset.name(item, id: id)) as \(value ? "" : "not ")\(column) — \(environment.pendingSummary()).")
        return .redirect(
            to: listPath(preset, referer: request.headers[.referer]) + "#row-\(PercentDecoding.encode(id))")
    }

    private func update(_ table: TableDescription, id: String, _ changes: Item) async throws(HTTPError) {
        var update = changes
        update[SystemColumn.id] = .string(id)
        let context = environment.context
        _ = try await storeCall { () async throws(SyncError) in try await context.table(table.name).update(update) }
    }

    /// The list a form was sent from (path and query of a same-site `Referer`), else the preset's list.
    private func listPath(_ preset: TablePreset, referer: String?) -> String {
        guard let referer, let url = URL(string: referer), url.path == preset.listPath else { return preset.listPath }
        return DashboardEnvironment.safeBack(preset.listPath + (url.query.map { "?" + $0 } ?? ""))
    }

    /// Deletes after a confirmation: a form without `confirm=yes` gets the confirmation page first.
    func delete(_ request: Request, _ preset: TablePreset) async throws -> Response {
        let (table, item, id) = try row(request, preset)
        guard try request.form()["confirm"] == "yes" else {
            return environment.renderer.page(
                "data/delete", request, section: preset.section,
                DataDeletePage(
                    table: table.name, noun: preset.noun, name: preset.name(item, id: id), href: preset.href(id)))
        }
        let context = environment.context
        try await storeCall { () async throws(SyncError) in try await context.table(table.name).delete(id: id) }
        environment.sessions.flash(
            request, .success,
            "Deleted \(preset.name(item, id: id)) from \(table.name) locally — \(environment.pendingSummary()).")
        return .redirect(to: preset.listPath)
    }
}
