import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/`: the todo list with filters, search and pages; `POST /items` adds a todo.
///
/// The list runs newest first. Pages are cut by the key of a row they border (`?older=KEY` for
/// the next page, `?newer=KEY` for the previous one, `?at=last`), so every page costs the same
/// at 1,000 rows as at 1,000,000, and a row never shows twice while others come and go.
struct TodoListController: Sendable {
    let environment: DashboardEnvironment
    static let pageSize = 50

    /// Which todos the list shows.
    enum Show: String, CaseIterable {
        case all, active, completed

        var label: String { rawValue.capitalized }

        var flag: ListRequest.Flag? {
            switch self {
            case .all: nil
            case .active: ListRequest.Flag("complete", false)
            case .completed: ListRequest.Flag("complete", true)
            }
        }
    }

    /// The list's query string, read and checked.
    struct ListQuery {
        var show: Show = .all
        var search = ""
        var position = ListPosition.first

        init(_ request: Request) throws(HTTPError) {
            if let value = request.query("show"), !value.isEmpty {
                guard let show = Show(rawValue: value) else {
                    throw HTTPError(.badRequest, "Unknown filter '\(value)': use all, active or completed.")
                }
                self.show = show
            }
            search = String((request.query("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(200))
            if let value = request.query("older"), !value.isEmpty {
                position = .olderThan(try Self.key(value))
            } else if let value = request.query("newer"), !value.isEmpty {
                position = .newerThan(try Self.key(value))
            } else if let value = request.query("at"), !value.isEmpty {
                guard value == "last" else { throw HTTPError(.badRequest, "Use at=last for the last page.") }
                position = .last
            }
        }

        private static func key(_ value: String) throws(HTTPError) -> Int64 {
            guard let key = Int64(value), key >= 0 else {
                throw HTTPError(.badRequest, "A page position is a whole number, as in the Next and Previous links.")
            }
            return key
        }

        var request: ListRequest {
            ListRequest(flag: show.flag, search: search, position: position, limit: TodoListController.pageSize)
        }

        func href(show: Show? = nil, position: ListPosition = .first) -> String {
            var items: [String] = []
            let show = show ?? self.show
            if show != .all { items.append("show=\(show.rawValue)") }
            if !search.isEmpty { items.append("q=\(PercentDecoding.encode(search))") }
            switch position {
            case .first: break
            case .olderThan(let key): items.append("older=\(key)")
            case .newerThan(let key): items.append("newer=\(key)")
            case .last: items.append("at=last")
            }
            return "/" + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
        }
    }

    func addRoutes(to router: inout Router) {
        router.get("/") { request in try list(request) }
        router.post("/items") { request in try add(request) }
    }

    /// The page the query asks for, read in one read transaction with each row's queued change.
    func page(_ query: ListQuery) throws(HTTPError) -> ListPage {
        let context = environment.context
        return try storeCall { () throws(SyncError) in
            try context.listPage(DashboardEnvironment.table, query.request)
        }
    }

    /// The rows of `page`, each with its pending operation's badge.
    func rows(_ page: ListPage) -> [TodoRow] {
        page.items.map { item in
            TodoPresenter.row(
                item, operation: item[SystemColumn.id]?.stringValue.flatMap { page.operations[$0] },
                csrf: environment.renderer.csrfToken)
        }
    }

    func list(_ request: Request, form: TodoInput.Invalid? = nil, status: HTTPResponse.Status = .ok) throws -> Response
    {
        let query = try ListQuery(request)
        let page = try page(query)
        let rows = rows(page)
        var pager: TodoListPage.Pager?
        if page.hasNewer || page.hasOlder {
            pager = TodoListPage.Pager(
                summary: summary(page, query: query),
                first: page.hasNewer ? query.href() : nil,
                previous: page.hasNewer ? page.keys.first.map { query.href(position: .newerThan($0)) } : nil,
                next: page.hasOlder ? page.keys.last.map { query.href(position: .olderThan($0)) } : nil,
                last: page.hasOlder ? query.href(position: .last) : nil)
        }
        let content = TodoListPage(
            rows: environment.todoRows.fragments(rows), hasItems: !rows.isEmpty,
            show: query.show.rawValue, search: query.search, total: page.total,
            filters: Show.allCases.map { show in
                TodoListPage.FilterLink(label: show.label, href: query.href(show: show), current: show == query.show)
            },
            emptyMessage: emptyMessage(query), pager: pager,
            form: form.map { TodoForm(text: $0.text, complete: $0.complete, error: $0.message) })
        return environment.renderer.page("todos", request, section: .todos, status: status, content)
    }

    private func summary(_ page: ListPage, query: ListQuery) -> String {
        let shown = "\(page.items.count) shown"
        guard let total = page.total else { return "\(shown) · matches for “\(query.search)”" }
        return "\(shown) of \(total.formatted()) \(query.show == .all ? "" : query.show.rawValue + " ")todos"
    }

    private func emptyMessage(_ query: ListQuery) -> String {
        if query.position != .first { return "This page is past the end of the list." }
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
            return try list(request, form: invalid, status: .unprocessableContent)
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
