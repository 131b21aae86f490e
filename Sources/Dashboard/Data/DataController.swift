import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// The one list and record view of every table: `/data`, `/data/{table}` and `/data/{table}/{id}`,
/// and the todo list (``TablePreset/todos``) at `/` and `/items/{id}`. Writes change only the local
/// store and the queue.
struct DataController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        // Live: each table with its counts.
        router.getLive(
            "/data", environment, template: "data/tables", partials: ["data/tables-list"], section: .data,
            content: { _ in try tablesContent() })
        addRoutes(to: &router, list: "/data/:table", record: "/data/:table") { .plain($0.parameters["table"] ?? "") }
        addRoutes(to: &router, list: "/", record: "/items") { _ in .todos }
    }

    private func addRoutes(
        to router: inout Router, list: String, record: String, preset: @escaping @Sendable (Request) -> TablePreset
    ) {
        router.getLive(list, updates: environment.live) { request in
            try self.list(request, preset(request))
        } fragments: { request in
            try listFragments(request, preset(request))
        }
        router.post(record) { request async throws in try await add(request, preset(request)) }
        router.getLive(record + "/:id", updates: environment.live) { request in
            try show(request, preset(request))
        } fragments: { request in
            try recordFragments(request, preset(request))
        }
        router.post(record + "/:id") { request async throws in try await save(request, preset(request)) }
        router.post(record + "/:id/set") { request async throws in try await set(request, preset(request)) }
        router.post(record + "/:id/delete") { request async throws in
            try await delete(request, preset(request))
        }
    }

    /// The preset's table; unknown → 404 naming it.
    func table(_ preset: TablePreset) throws(HTTPError) -> TableDescription {
        let context = environment.context
        return try storeCall { () throws(SyncError) in try context.description(of: preset.table) }
    }

    // MARK: Tables

    /// What `/data` shows.
    func tablesContent() throws -> DataTablesPage {
        DataTablesPage(tables: try tableLines())
    }

    /// Each table's line of `/data` (and `GET /api/data`).
    func tableLines() throws -> [DataTablesPage.Table] {
        let context = environment.context
        let synced = (try? context.syncedTables()) ?? []
        let names = synced + context.tables.map(\.name).filter { !synced.contains($0) }
        return try names.compactMap { name throws(HTTPError) -> DataTablesPage.Table? in
            guard let table = try? context.description(of: name) else { return nil }
            let (total, counts) = try storeCall { () throws(SyncError) in
                (try context.listPage(name, ListRequest(limit: 1)).total, try context.operations.counts(table: name))
            }
            return DataTablesPage.Table(
                name: name, href: TablePreset.plain(name).listPath, rows: total ?? 0, columns: table.columns.count,
                pending: counts.waiting, conflicts: counts.conflicts, hasConflicts: counts.conflicts > 0,
                synced: synced.contains(name))
        }
    }

    // MARK: List

    func list(
        _ request: Request, _ preset: TablePreset, invalid: RecordForm.Invalid? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        environment.renderer.page(
            "data/list", request, section: preset.section, status: status,
            try listContent(request, preset, invalid: invalid))
    }

    /// What the list shows for the request's query (filters, search, page): the page and its live
    /// fragments are both rendered from it.
    func listContent(
        _ request: Request, _ preset: TablePreset, invalid: RecordForm.Invalid? = nil
    ) throws -> DataListPage {
        let table = try table(preset)
        let query = try DataListQuery(request, table: table, preset: preset)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.listPage(table.name, query.request) }
        let view = ListView(table: table, preset: preset, csrf: environment.renderer.csrfToken)
        let columnChanges = (try? context.columnChanges(of: table.name)) ?? ColumnChanges()
        let rows = page.items.map { item in
            view.row(item, operation: item[SystemColumn.id]?.stringValue.flatMap { page.operations[$0] })
        }
        var pager: Pager?
        if page.hasNewer || page.hasOlder {
            pager = Pager(
                summary: "\(page.items.count) shown"
                    + (page.total.map { " of \($0.formatted()) \(preset.noun)s" } ?? ""),
                first: page.hasNewer ? query.href() : nil,
                previous: page.hasNewer ? page.keys.first.map { query.href(.newerThan($0)) } : nil,
                next: page.hasOlder ? page.keys.last.map { query.href(.olderThan($0)) } : nil,
                last: page.hasOlder ? query.href(.last) : nil)
        }
        let tabs: [FilterLink] =
            preset.tabs.map { tabs in
                tabs.named.map { tab -> FilterLink in
                    let flag = tab.value.map { ListRequest.Flag(tabs.column, $0) }
                    return FilterLink(
                        label: tab.label, href: query.href(flag: .some(flag)), current: flag == query.flag)
                }
            } ?? []
        let flags = table.columns.filter { $0.type == .boolean && $0.name != preset.tabs?.column }.map { column in
            DataListPage.FlagFilter(
                column: column.name,
                links: [("Any", nil), ("Yes", true), ("No", false)].map { label, value in
                    let flag = value.map { ListRequest.Flag(column.name, $0) }
                    return FilterLink(
                        label: label, href: query.href(flag: .some(flag)),
                        current: flag == query.flag || (flag == nil && query.flag?.column != column.name))
                })
        }
        return DataListPage(
            title: preset.title, table: table.name, noun: preset.noun, href: preset.listPath,
            addAction: preset.recordPath, tabs: tabs, hasTabs: !tabs.isEmpty, flagFilters: flags,
            searchable: table.columns.contains { $0.type == .text }, search: query.search,
            hidden: query.filterFields.map { .init(name: $0.name, value: $0.value) }, showsId: view.showsId,
            columns: view.columns.map {
                .init(
                    heading: $0.heading, type: $0.type, isNumber: $0.isNumber,
                    serviceChange: columnChanges.columns[$0.name]?.label)
            },
            rows: environment.listRows.fragments(rows), hasRows: !rows.isEmpty, total: page.total,
            emptyMessage: emptyMessage(query), pager: pager,
            quickAdd: preset.labelColumn.map { column in
                .init(
                    inputName: RecordForm.inputName(column), value: invalid?.typed[column] ?? "",
                    error: invalid?.errors[column])
            },
            addFields: preset.labelColumn == nil ? RecordForm.fields(table, item: nil, invalid: invalid) : [],
            newColumn: preset.labelColumn == nil ? RecordForm.newColumn(table, invalid: invalid) : nil,
            addError: preset.labelColumn == nil ? invalid?.summary : nil)
    }

    private func emptyMessage(_ query: DataListQuery) -> String {
        let noun = query.preset.noun
        if query.position != .first { return "This page is past the end of the list." }
        if !query.search.isEmpty { return "No \(noun) matches “\(query.search)”." }
        if query.flag != nil { return "No \(noun) matches this filter." }
        return "No \(noun)s yet. Add one, or press Sync to fetch them from the service."
    }

    private func add(_ request: Request, _ preset: TablePreset) async throws -> Response {
        let table = try table(preset)
        switch RecordForm.changes(try request.form(), table: table, current: nil) {
        case .failure(let invalid):
            return try list(request, preset, invalid: invalid, status: .unprocessableContent)
        case .success(let item):
            let context = environment.context
            let stored = try await storeCall { () async throws(SyncError) in
                try await context.table(table.name).insert(item)
            }
            let id = stored[SystemColumn.id]?.stringValue ?? ""
            environment.sessions.flash(
                request, .success,
                "Added \(preset.name(stored, id: id)) to \(table.name) — saved locally, "
                    + "\(environment.pendingSummary()).")
            return .redirect(to: preset.labelColumn == nil ? preset.href(id) : preset.listPath)
        }
    }
}
