import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/items/{id}/history`, `/data/{table}/{id}/history` and `/api/data/{table}/{id}/history`: why a row is as it
/// is, in one sentence, above every kept event that touched it, oldest first.
struct HistoryController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.get("/items/:id/history") { request in try page(request, table: DashboardEnvironment.table) }
        router.get("/data/:table/:id/history") { request in try page(request, table: request.parameters["table"] ?? "")
        }
    }

    /// Adds its JSON route to the dashboard's `/api` group.
    func addAPIRoutes(to api: inout Router) {
        api.get("/data/:table/:id/history") { request in
            try self.api(request, table: request.parameters["table"] ?? "")
        }
    }

    /// The history page of row `id` of `table`.
    static func href(_ table: String, _ id: String) -> String {
        TablePreset.href(table, id) + "/history"
    }

    /// The row's history; 404 for an unknown table, or a row this device neither holds nor remembers.
    private func history(_ request: Request, table: String) throws(HTTPError) -> ItemHistory {
        let id = request.parameters["id"] ?? ""
        let context = environment.context
        let history = try storeCall { () throws(SyncError) in try context.table(table).history(id: id) }
        guard history.row != nil || !history.events.isEmpty || history.operation != nil else {
            throw HTTPError(
                .notFound, "This device has no row “\(id)” in \(table), and no kept event names it.")
        }
        return history
    }

    private func page(_ request: Request, table: String) throws -> Response {
        let history = try history(request, table: table)
        let section: Navigation.Section = table == DashboardEnvironment.table ? .todos : .data
        return environment.renderer.page("history", request, section: section, HistoryView(history))
    }

    /// `{"table", "itemId", "explanation", "events": [...], "row", "operation"}`, events oldest first.
    private func api(_ request: Request, table: String) throws -> Response {
        JSONAnswer.response(try history(request, table: table))
    }
}
