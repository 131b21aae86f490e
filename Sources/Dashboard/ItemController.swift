import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/items/{id}`: the item editor; saving and deleting change only the local store and the queue.
struct ItemController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.get("/items/:id") { request in try show(request) }
        router.post("/items/:id") { request in try save(request) }
        router.post("/items/:id/complete") { request in try complete(request) }
        router.post("/items/:id/delete") { request in try delete(request) }
    }

    private func item(_ request: Request) throws(HTTPError) -> Item {
        let id = request.parameters["id"] ?? ""
        let table = environment.todos
        guard let item = try storeCall({ () throws(SyncError) in try table.item(id: id) }) else {
            throw HTTPError(
                .notFound, "There is no todo with the id “\(id)” here. It may have been deleted, or not pulled yet.")
        }
        return item
    }

    func show(_ request: Request, form: TodoInput.Invalid? = nil, status: HTTPResponse.Status = .ok) throws -> Response
    {
        let item = try item(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        var page = ItemPage(
            item: TodoPresenter.row(item, operation: nil, csrf: environment.renderer.csrfToken),
            form: TodoForm(
                text: form?.text ?? item["text"]?.stringValue ?? "",
                complete: form?.complete ?? item["complete"]?.boolValue ?? false, error: form?.message),
            operation: pendingChange(id), dataHref: DataController.href(DashboardEnvironment.table, id))
        page.otherColumns = otherColumns(item)
        return environment.renderer.page("item", request, section: .todos, status: status, page)
    }

    /// The todo's columns beyond text and complete, in the table's order.
    private func otherColumns(_ item: Item) -> [ItemPage.OtherColumn] {
        guard let table = try? environment.context.description(of: DashboardEnvironment.table) else { return [] }
        let mismatched = Set(table.mismatchedColumns(of: item))
        return table.columns.filter { $0.name != "text" && $0.name != "complete" }.map { column in
            ItemPage.OtherColumn(
                name: column.name, type: column.type.rawValue,
                value: ColumnInput.text(item[column.name], as: column.type),
                mismatch: mismatched.contains(column.name))
        }
    }

    private func pendingChange(_ id: String) -> ItemPage.PendingChange? {
        Self.pendingChange(environment.context, table: DashboardEnvironment.table, id: id)
    }

    /// The latest queued change of the row `id` of `table`, as an editor describes it.
    static func pendingChange(_ context: SyncContext, table: String, id: String) -> ItemPage.PendingChange? {
        guard let operation = try? context.operations(table: table, itemId: id).last else { return nil }
        return ItemPage.PendingChange(
            kind: operation.kind.rawValue, state: TodoPresenter.stateLabel(operation.state),
            badge: TodoPresenter.stateBadge(operation.state),
            conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
            message: operation.message.map { ReadableAnswer($0).text })
    }

    private func save(_ request: Request) throws -> Response {
        var item = try item(request)
        switch TodoInput.parse(try request.form()) {
        case .failure(let invalid):
            return try show(request, form: invalid, status: .unprocessableContent)
        case .success(let input):
            item["text"] = .string(input.text)
            item["complete"] = .bool(input.complete)
            let table = environment.todos
            _ = try storeCall { () throws(SyncError) in try table.update(item) }
            environment.sessions.flash(request, .success, "Saved locally — \(environment.pendingSummary()).")
            return .redirect(to: "/")
        }
    }

    /// Quick complete from the list: sets `complete` and returns to the row (a script gets JSON).
    private func complete(_ request: Request) throws -> Response {
        var item = try item(request)
        let form = try request.form()
        guard let complete = ["true": true, "false": false][form["complete"] ?? ""] else {
            throw HTTPError(.badRequest, "Send complete=true or complete=false.")
        }
        item["complete"] = .bool(complete)
        let table = environment.todos
        let saved = try storeCall { () throws(SyncError) in try table.update(item) }
        let id = saved[SystemColumn.id]?.stringValue ?? ""
        if request.headers[.xRequestedWith] == "fetch" {
            let context = environment.context
            let operation = try? context.latestOperations(table: DashboardEnvironment.table, itemIds: [id])[id]
            return JSONAnswer.response(
                TodoPresenter.row(saved, operation: operation, csrf: environment.renderer.csrfToken))
        }
        environment.sessions.flash(
            request, .success,
            "Marked “\(TodoPresenter.label(saved, id: id))” as \(complete ? "done" : "not done") — "
                + "\(environment.pendingSummary()).")
        return .redirect(to: Self.listPath(referer: request.headers[.referer]) + "#todo-\(PercentDecoding.encode(id))")
    }

    /// The list page a form was sent from (path and query of a same-site `Referer`), else `/`.
    static func listPath(referer: String?) -> String {
        guard let referer, let url = URL(string: referer), url.path == "/" else { return "/" }
        return DashboardEnvironment.safeBack("/" + (url.query.map { "?" + $0 } ?? ""))
    }

    /// Deletes after a confirmation: a form without `confirm=yes` (no script to ask) gets the
    /// confirmation page first.
    private func delete(_ request: Request) throws -> Response {
        let item = try item(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        guard try request.form()["confirm"] == "yes" else {
            return environment.renderer.page(
                "delete", request, section: .todos,
                DeletePage(item: TodoPresenter.row(item, operation: nil, csrf: environment.renderer.csrfToken)))
        }
        let table = environment.todos
        try storeCall { () throws(SyncError) in try table.delete(id: id) }
        environment.sessions.flash(
            request, .success,
            "Deleted “\(TodoPresenter.label(item, id: id))” locally — \(environment.pendingSummary()).")
        return .redirect(to: "/")
    }
}
