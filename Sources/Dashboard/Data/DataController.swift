import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/data`, `/data/{table}` and `/data/{table}/{id}`: any table's rows, and an editor with one input
/// per column. Writes change only the local store and the queue, like the todo pages.
struct DataController: Sendable {
    let environment: DashboardEnvironment
    static let pageSize = 50

    func addRoutes(to router: inout Router) {
        router.get("/data") { request in try tables(request) }
        router.get("/data/:table") { request in try list(request) }
        router.post("/data/:table") { request in try add(request) }
        router.get("/data/:table/:id") { request in try show(request) }
        router.post("/data/:table/:id") { request in try save(request) }
        router.post("/data/:table/:id/delete") { request in try delete(request) }
    }

    /// `/data/{table}` with both parts percent-encoded.
    static func href(_ table: String, _ id: String? = nil) -> String {
        "/data/" + PercentDecoding.encode(table) + (id.map { "/" + PercentDecoding.encode($0) } ?? "")
    }

    /// The table of the request's `:table`; unknown → 404 naming it.
    private func table(_ request: Request) throws(HTTPError) -> TableDescription {
        let name = request.parameters["table"] ?? ""
        let context = environment.context
        return try storeCall { () throws(SyncError) in try context.description(of: name) }
    }

    // MARK: Tables

    private func tables(_ request: Request) throws -> Response {
        let context = environment.context
        let synced = (try? context.syncedTables()) ?? []
        let names = synced + context.tables.map(\.name).filter { !synced.contains($0) }
        let lines = try names.compactMap { name throws(HTTPError) -> DataTablesPage.Table? in
            guard let table = try? context.description(of: name) else { return nil }
            let total = try storeCall { () throws(SyncError) in try context.listPage(name, ListRequest(limit: 1)).total
            }
            let counts = try storeCall { () throws(SyncError) in try context.operationCounts(table: name) }
            return DataTablesPage.Table(
                name: name, href: Self.href(name), rows: total ?? 0, columns: table.columns.count,
                pending: counts.waiting, conflicts: counts.conflicts, hasConflicts: counts.conflicts > 0,
                synced: synced.contains(name))
        }
        return environment.renderer.page("data/tables", request, section: .data, DataTablesPage(tables: lines))
    }

    // MARK: List

    func list(
        _ request: Request, invalid: RecordForm.Invalid? = nil, status: HTTPResponse.Status = .ok
    ) throws
        -> Response
    {
        let table = try table(request)
        let query = try DataListQuery(request, table: table)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.listPage(table.name, query.request) }
        let rows = page.items.map { item -> DataListPage.Row in
            let id = item[SystemColumn.id]?.stringValue ?? ""
            let mismatched = Set(table.mismatchedColumns(of: item))
            return DataListPage.Row(
                id: id, href: Self.href(table.name, id),
                cells: table.columns.map { column in
                    let text = ColumnInput.text(item[column.name], as: column.type)
                    return DataListPage.Cell(
                        text: text.count > 120 ? String(text.prefix(119)) + "…" : text,
                        mismatch: mismatched.contains(column.name))
                },
                badge: page.operations[id].map(TodoPresenter.badge))
        }
        var pager: TodoListPage.Pager?
        if page.hasNewer || page.hasOlder {
            let shown = "\(page.items.count) shown" + (page.total.map { " of \($0.formatted()) rows" } ?? "")
            pager = TodoListPage.Pager(
                summary: shown, first: page.hasNewer ? query.href() : nil,
                previous: page.hasNewer ? page.keys.first.map { query.href(.newerThan($0)) } : nil,
                next: page.hasOlder ? page.keys.last.map { query.href(.olderThan($0)) } : nil,
                last: page.hasOlder ? query.href(.last) : nil)
        }
        let flags = table.columns.filter { $0.type == .boolean }.map { column in
            DataListPage.FlagFilter(
                column: column.name,
                links: [("Any", nil), ("Yes", true), ("No", false)].map { label, value in
                    let flag = value.map { ListRequest.Flag(column.name, $0) }
                    return TodoListPage.FilterLink(
                        label: label, href: query.href(flag: .some(flag)),
                        current: flag == query.flag || (flag == nil && query.flag?.column != column.name))
                })
        }
        let content = DataListPage(
            table: table.name, href: Self.href(table.name),
            columns: table.columns.map { DataListPage.Column(name: $0.name, type: $0.type.rawValue) },
            rows: rows, hasRows: !rows.isEmpty, search: query.search,
            searchable: table.columns.contains { $0.type == .text }, flagColumn: query.flag?.column,
            flagValue: query.flag.map { $0.value ? "true" : "false" }, flagFilters: flags, total: page.total,
            emptyMessage: query.search.isEmpty && query.flag == nil
                ? "No rows yet. Add one below, or press Sync to fetch them from the service."
                : "No row matches.",
            pager: pager, addFields: RecordForm.fields(table, item: nil, invalid: invalid),
            addError: invalid?.summary)
        return environment.renderer.page("data/list", request, section: .data, status: status, content)
    }

    private func add(_ request: Request) throws -> Response {
        let table = try table(request)
        switch RecordForm.changes(try request.form(), table: table, current: nil) {
        case .failure(let invalid):
            return try list(request, invalid: invalid, status: .unprocessableContent)
        case .success(let item):
            let context = environment.context
            let stored = try storeCall { () throws(SyncError) in try context.table(table.name).insert(item) }
            let id = stored[SystemColumn.id]?.stringValue ?? ""
            environment.sessions.flash(
                request, .success, "Added \(id) to \(table.name) — saved locally, \(environment.pendingSummary()).")
            return .redirect(to: Self.href(table.name, id))
        }
    }

    // MARK: One row

    private func row(_ request: Request, _ table: TableDescription) throws(HTTPError) -> Item {
        let id = request.parameters["id"] ?? ""
        let context = environment.context
        guard let item = try storeCall({ () throws(SyncError) in try context.item(id: id, in: table.name) }) else {
            throw HTTPError(
                .notFound,
                "There is no row with the id “\(id)” in \(table.name). It may have been deleted, or not pulled yet.")
        }
        return item
    }

    private func show(
        _ request: Request, invalid: RecordForm.Invalid? = nil, status: HTTPResponse.Status = .ok
    )
        throws -> Response
    {
        let table = try table(request)
        let item = try row(request, table)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let content = DataRecordPage(
            table: table.name, tableHref: Self.href(table.name), id: id, href: Self.href(table.name, id),
            version: item[SystemColumn.version]?.stringValue,
            updatedAt: TodoPresenter.date(item[SystemColumn.updatedAt]),
            fields: RecordForm.fields(table, item: item, invalid: invalid), error: invalid?.summary,
            operation: ItemController.pendingChange(environment.context, table: table.name, id: id),
            todoHref: table.name == DashboardEnvironment.table ? "/items/" + PercentDecoding.encode(id) : nil)
        return environment.renderer.page("data/record", request, section: .data, status: status, content)
    }

    private func save(_ request: Request) throws -> Response {
        let table = try table(request)
        let item = try row(request, table)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        switch RecordForm.changes(try request.form(), table: table, current: item) {
        case .failure(let invalid):
            return try show(request, invalid: invalid, status: .unprocessableContent)
        case .success(let changes):
            guard !changes.isEmpty else {
                environment.sessions.flash(request, .info, "Nothing changed in \(id).")
                return .redirect(to: Self.href(table.name, id))
            }
            var update = changes
            update[SystemColumn.id] = .string(id)
            let context = environment.context
            _ = try storeCall { () throws(SyncError) in try context.table(table.name).update(update) }
            environment.sessions.flash(
                request, .success,
                "Saved \(changes.keys.sorted().joined(separator: ", ")) of \(id) locally — "
                    + "\(environment.pendingSummary()).")
            return .redirect(to: Self.href(table.name))
        }
    }

    /// Deletes after a confirmation: a form without `confirm=yes` gets the confirmation page first.
    private func delete(_ request: Request) throws -> Response {
        let table = try table(request)
        let item = try row(request, table)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        guard try request.form()["confirm"] == "yes" else {
            return environment.renderer.page(
                "data/delete", request, section: .data,
                DataDeletePage(table: table.name, id: id, href: Self.href(table.name, id)))
        }
        let context = environment.context
        try storeCall { () throws(SyncError) in try context.delete(id: id, from: table.name) }
        environment.sessions.flash(
            request, .success, "Deleted \(id) from \(table.name) locally — \(environment.pendingSummary()).")
        return .redirect(to: Self.href(table.name))
    }
}
