import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/items/{id}`: the item editor; saving and deleting change only the local store and the queue.
struct ItemController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.get("/items/:id") { request in try show(request) }
        router.post("/items/:id") { request in try save(request) }
        router.post("/items/:id/delete") { request in try delete(request) }
    }

    private func item(_ request: Request) throws(HTTPError) -> Item {
        let id = request.parameters["id"] ?? ""
        let table = environment.todos
        guard let item = try storeCall({ () throws(SyncError) in try table.item(id: id) }) else {
            throw HTTPError(
                404, "There is no todo with the id “\(id)” here. It may have been deleted, or not pulled yet.")
        }
        return item
    }

    func show(_ request: Request, form: TodoInput.Invalid? = nil, status: Int = 200) throws -> Response {
        let item = try item(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let page = ItemPage(
            item: TodoPresenter.row(item, operation: nil),
            form: TodoForm(
                text: form?.text ?? item["text"]?.stringValue ?? "",
                complete: form?.complete ?? item["complete"]?.boolValue ?? false, error: form?.message),
            operation: pendingChange(id))
        return environment.renderer.page("item", request, section: .todos, status: status, page)
    }

    private func pendingChange(_ id: String) -> ItemPage.PendingChange? {
        guard let operation = try? environment.context.operations(table: DashboardEnvironment.table, itemId: id).last
        else { return nil }
        return ItemPage.PendingChange(
            kind: operation.kind.rawValue, state: TodoPresenter.stateLabel(operation.state),
            badge: TodoPresenter.stateBadge(operation.state),
            conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
            message: operation.message)
    }

    private func save(_ request: Request) throws -> Response {
        var item = try item(request)
        switch TodoInput.parse(try request.form()) {
        case .failure(let invalid):
            return try show(request, form: invalid, status: 422)
        case .success(let input):
            item["text"] = .string(input.text)
            item["complete"] = .bool(input.complete)
            let table = environment.todos
            _ = try storeCall { () throws(SyncError) in try table.update(item) }
            environment.sessions.flash(request, .success, "Saved locally — \(environment.pendingSummary()).")
            return .redirect(to: "/")
        }
    }

    private func delete(_ request: Request) throws -> Response {
        let item = try item(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let table = environment.todos
        try storeCall { () throws(SyncError) in try table.delete(id: id) }
        environment.sessions.flash(
            request, .success,
            "Deleted “\(TodoPresenter.label(item, id: id))” locally — \(environment.pendingSummary()).")
        return .redirect(to: "/")
    }
}
