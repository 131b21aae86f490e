import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/`: the todo list with filters, search and pages; `POST /items` adds a todo.
struct TodoListController: Sendable {
    let environment: DashboardEnvironment
    static let pageSize = 50

    /// Which todos the list shows.
    enum Show: String, CaseIterable {
        case all, active, completed

        var label: String { rawValue.capitalized }
    }

    /// The list's query string, read and checked.
    struct ListQuery {
        var show: Show = .all
        var search = ""
        var page = 1

        init(_ request: Request) throws(HTTPError) {
            if let value = request.query("show"), !value.isEmpty {
                guard let show = Show(rawValue: value) else {
                    throw HTTPError.badRequest("Unknown filter '\(value)': use all, active or completed.")
                }
                self.show = show
            }
            search = String((request.query("q") ?? "").prefix(200))
            if let value = request.query("page"), !value.isEmpty {
                guard let page = Int(value), page >= 1 else {
                    throw HTTPError.badRequest("The page number must be a whole number from 1.")
                }
                self.page = page
            }
        }

        var predicate: TableQuery.Predicate? {
            var parts: [TableQuery.Predicate] = []
            switch show {
            case .all: break
            case .active: parts.append(.or([.equal("complete", .bool(false)), .equal("complete", .null)]))
            case .completed: parts.append(.equal("complete", .bool(true)))
            }
            if !search.isEmpty { parts.append(.contains("text", search)) }
            return parts.isEmpty ? nil : (parts.count == 1 ? parts[0] : .and(parts))
        }

        func href(show: Show? = nil, page: Int? = nil) -> String {
            var items: [String] = []
            let show = show ?? self.show
            if show != .all { items.append("show=\(show.rawValue)") }
            if !search.isEmpty { items.append("q=\(PercentDecoding.encode(search))") }
            if let page, page > 1 { items.append("page=\(page)") }
            return "/" + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
        }
    }

    func addRoutes(to router: inout Router) {
        router.get("/") { request in try list(request) }
        router.post("/items") { request in try add(request) }
    }

    /// The page's items and how many match in all.
    ///
    /// Newest first: todos never pushed (no `createdAt` yet) come first, then the others by
    /// `createdAt`; both orders follow an index, so deep pages of 100k rows stay fast.
    func items(_ query: ListQuery) throws(HTTPError) -> (items: [Item], total: Int) {
        let table = environment.todos
        let local = Self.combine(query.predicate, .equal("createdAt", .null))
        let synced = Self.combine(query.predicate, .notEqual("createdAt", .null))
        let localCount = try storeCall { () throws(SyncError) in try table.count(TableQuery(where: local)) }
        let syncedCount = try storeCall { () throws(SyncError) in try table.count(TableQuery(where: synced)) }
        let offset = (query.page - 1) * Self.pageSize
        var items: [Item] = []
        if offset < localCount {
            let page = TableQuery(where: local, orderBy: [.descending("rowid")], limit: Self.pageSize, offset: offset)
            items = try storeCall { () throws(SyncError) in try table.query(page) }
        }
        if items.count < Self.pageSize {
            let page = TableQuery(
                where: synced, orderBy: [.descending("createdAt"), .descending("id")],
                limit: Self.pageSize - items.count, offset: max(0, offset - localCount))
            items += try storeCall { () throws(SyncError) in try table.query(page) }
        }
        return (items, localCount + syncedCount)
    }

    /// The rows of `items`, each with its pending operation's badge.
    func rows(_ items: [Item]) throws(HTTPError) -> [TodoRow] {
        let ids = items.map { $0[SystemColumn.id]?.stringValue ?? "" }
        let context = environment.context
        let operations = try storeCall { () throws(SyncError) in
            try context.latestOperations(table: DashboardEnvironment.table, itemIds: ids)
        }
        return zip(items, ids).map { item, id in TodoPresenter.row(item, operation: operations[id]) }
    }

    private static func combine(_ first: TableQuery.Predicate?, _ second: TableQuery.Predicate) -> TableQuery.Predicate
    {
        first.map { .and([$0, second]) } ?? second
    }

    func list(_ request: Request, form: TodoInput.Invalid? = nil, status: Int = 200) throws -> Response {
        let query = try ListQuery(request)
        let (items, total) = try items(query)
        let pages = max(1, (total + Self.pageSize - 1) / Self.pageSize)
        var pager: TodoListPage.Pager?
        if pages > 1 || query.page > 1 {
            pager = TodoListPage.Pager(
                summary: "Page \(query.page) of \(pages) · \(total) todos",
                previous: query.page > 1 ? query.href(page: query.page - 1) : nil,
                next: query.page < pages ? query.href(page: query.page + 1) : nil)
        }
        let page = TodoListPage(
            rows: environment.todoRows.fragments(try rows(items)), hasItems: !items.isEmpty,
            show: query.show.rawValue, search: query.search,
            filters: Show.allCases.map { show in
                TodoListPage.FilterLink(label: show.label, href: query.href(show: show), current: show == query.show)
            },
            emptyMessage: emptyMessage(query, total: total), pager: pager,
            form: form.map { TodoForm(text: $0.text, complete: $0.complete, error: $0.message) })
        return environment.renderer.page("todos", request, section: .todos, status: status, page)
    }

    private func emptyMessage(_ query: ListQuery, total: Int) -> String {
        if query.page > 1 { return "This page is past the end of the list." }
        if !query.search.isEmpty { return "No todo matches “\(query.search)”." }
        switch query.show {
        case .all: return "No todos yet. Add one above, or press Sync to fetch them from the service."
        case .active: return "Nothing left to do."
        case .completed: return "Nothing completed yet."
        }
    }

    private func add(_ request: Request) throws -> Response {
        let form = try request.form()
        switch TodoInput.parse(text: form["text"], complete: nil) {
        case .failure(let invalid):
            return try list(request, form: invalid, status: 422)
        case .success(let input):
            let table = environment.todos
            _ = try storeCall { () throws(SyncError) in
                try table.insert(["text": .string(input.text), "complete": .bool(input.complete)])
            }
            environment.sessions.flash(
                request, .success, "Added “\(input.text)” — saved locally, \(environment.pendingSummary()).")
            return .redirect(to: "/")
        }
    }
}
