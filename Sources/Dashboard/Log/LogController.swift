import Foundation
import HTTPServer
import SyncClient

/// `/log` and `/api/log`: the flight recorder's exchanges with the service, newest first, with
/// filters (status, table, item) and paging.
struct LogController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.get("/log") { request in try page(request) }
    }

    /// Adds its JSON route to the dashboard's `/api` group.
    func addAPIRoutes(to api: inout Router) {
        api.get("/log") { request in try self.api(request) }
    }

    /// The query of a request's filters (`status`, `table`, `item`, `before`, `limit`).
    static func query(_ request: Request) throws(HTTPError) -> ExchangeQuery {
        let status = request.query("status")?.trimmingCharacters(in: .whitespaces) ?? ""
        guard status.isEmpty || ExchangeQuery.isValidStatus(status) else {
            throw HTTPError(.badRequest, "'status' takes a status (412), a class (4xx) or failed, not '\(status)'.")
        }
        return ExchangeQuery(
            status: status, table: request.query("table"), itemId: request.query("item"),
            before: try request.query(
                "before", as: { Int64($0) }, mistake: { _ in "'before' must be an exchange number." }),
            limit: try request.limit(default: 50, maximum: 500))
    }

    private func exchanges(_ query: ExchangeQuery) throws -> ExchangePage {
        let context = environment.context
        return try storeCall { () throws(SyncError) in try context.exchanges(query) }
    }

    private func page(_ request: Request) throws -> Response {
        let query = try Self.query(request)
        let page = try exchanges(query)
        let context = environment.context
        let filters = Self.filterItems(query)
        let view = LogView(
            exchanges: page.exchanges.map(LogView.Exchange.init), hasExchanges: !page.exchanges.isEmpty,
            status: query.status, item: query.itemId,
            tables: context.tables.map { LogView.Option(value: $0.name, selected: $0.name == query.table) },
            filtered: !filters.isEmpty,
            retention: try storeCall { () throws(SyncError) in try context.retention(of: .exchanges) }.formatted(),
            olderURL: page.next.map { "/log" + JournalController.queryString(filters + [("before", String($0))]) },
            newestURL: query.before == nil ? nil : "/log" + JournalController.queryString(filters))
        return environment.renderer.page("log", request, section: .log, view)
    }

    /// `{"exchanges": [...], "next": 41}`: `next` is the `before` of the older page.
    private func api(_ request: Request) throws -> Response {
        JSONAnswer.response(try exchanges(try Self.query(request)))
    }

    /// The filters of a query as query-string items (no cursor).
    static func filterItems(_ query: ExchangeQuery) -> [(String, String)] {
        var items: [(String, String)] = []
        if let status = query.status { items.append(("status", status)) }
        if let table = query.table { items.append(("table", table)) }
        if let item = query.itemId { items.append(("item", item)) }
        if query.limit != 50 { items.append(("limit", String(query.limit))) }
        return items
    }
}
