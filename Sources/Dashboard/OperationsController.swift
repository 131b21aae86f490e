import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/operations`: the queue in push order; discarding one (after confirmation) loses that change.
struct OperationsController: Sendable {
    let environment: DashboardEnvironment
    /// Operations per page.
    static let pageSize = 100

    func addRoutes(to router: inout Router) {
        router.get("/operations") { request in try list(request) }
        router.get("/operations/:id/discard") { request in try confirmDiscard(request) }
        router.post("/operations/:id/discard") { request in try discard(request) }
        router.post("/operations/:id/retry") { request in try retry(request) }
    }

    /// The page of the queue the query string asks for: `?after=ID`, `?before=ID` or `?at=last`.
    static func position(_ request: Request) throws(HTTPError) -> QueuePosition {
        func id(_ value: String) throws(HTTPError) -> Int64 {
            guard let id = Int64(value), id >= 0 else {
                throw HTTPError(.badRequest, "A page position is a change number, as in the Next and Previous links.")
            }
            return id
        }
        if let value = request.query("after"), !value.isEmpty { return .after(try id(value)) }
        if let value = request.query("before"), !value.isEmpty { return .before(try id(value)) }
        if let value = request.query("at"), !value.isEmpty {
            guard value == "last" else { throw HTTPError(.badRequest, "Use at=last for the last page.") }
            return .last
        }
        return .first
    }

    func row(_ entry: QueuePage.Entry) -> OperationsPage.OperationRow {
        let operation = entry.operation
        let local = entry.localItem
        return OperationsPage.OperationRow(
            id: operation.id, sequence: operation.id, table: operation.table, kind: operation.kind.rawValue,
            state: TodoPresenter.stateLabel(operation.state), stateBadge: TodoPresenter.stateBadge(operation.state),
            attempts: operation.attempts,
            label: TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId),
            itemHref: local == nil
                ? nil
                : operation.table == DashboardEnvironment.table
                    ? "/items/\(PercentDecoding.encode(operation.itemId))"
                    : DataController.href(operation.table, operation.itemId),
            conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
            historyHref: HistoryController.href(operation.table, operation.itemId),
            lastStatus: operation.lastStatus, answer: ReadableAnswer(operation.message ?? ""),
            queuedAt: TodoPresenter.date(operation.queuedAt), canRetry: operation.state == .failed)
    }

    private func list(_ request: Request) throws -> Response {
        let position = try Self.position(request)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.operationsPage(position, limit: Self.pageSize) }
        let rows = page.entries.map(row)
        var pager: TodoListPage.Pager?
        if page.hasEarlier || page.hasLater {
            pager = TodoListPage.Pager(
                summary: "\(rows.count) shown of \(page.total.formatted()) queued changes",
                first: page.hasEarlier ? "/operations" : nil,
                previous: page.hasEarlier ? rows.first.map { "/operations?before=\($0.id)" } : nil,
                next: page.hasLater ? rows.last.map { "/operations?after=\($0.id)" } : nil,
                last: page.hasLater ? "/operations?at=last" : nil)
        }
        return environment.renderer.page(
            "operations", request, section: .operations,
            OperationsPage(
                operations: rows, hasOperations: !rows.isEmpty, canPush: page.total > 0, pager: pager,
                emptyMessage: position == .first
                    ? "Nothing to push: every change has reached the service."
                    : "This page is past the end of the queue."))
    }

    private func operation(_ request: Request) throws(HTTPError) -> TableOperation {
        guard let id = request.parameters["id"].flatMap(Int64.init) else {
            throw HTTPError(.notFound, "There is no queued change with that number.")
        }
        let context = environment.context
        guard let operation = try storeCall({ () throws(SyncError) in try context.operation(id) }) else {
            throw HTTPError(.notFound, "Change #\(id) is no longer queued: it was pushed or discarded already.")
        }
        return operation
    }

    /// The item's text as the list shows it now, else as the change carries it, else its id.
    private func label(of operation: TableOperation) -> String {
        let local = try? environment.context.item(id: operation.itemId, in: operation.table)
        return TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId)
    }

    private func confirmDiscard(_ request: Request) throws -> Response {
        let operation = try operation(request)
        return environment.renderer.page(
            "discard", request, section: .operations,
            DiscardPage(
                operation: DiscardPage.Target(
                    id: operation.id, kind: operation.kind.rawValue, label: label(of: operation),
                    hasBase: operation.base != nil)))
    }

    private func discard(_ request: Request) throws -> Response {
        let operation = try operation(request)
        let context = environment.context
        let text = label(of: operation)
        try storeCall { () throws(SyncError) in try context.discard(operation.id) }
        environment.sessions.flash(
            request, .success,
            "Discarded the \(operation.kind.rawValue) of “\(text)” — \(environment.pendingSummary()).")
        return .redirect(to: "/operations")
    }

    /// Retry of a change the service refused: it is queued again and a push starts.
    private func retry(_ request: Request) throws -> Response {
        let operation = try operation(request)
        guard operation.state == .failed else {
            throw HTTPError(.conflict, "Change #\(operation.id) was not refused: it waits for the next push already.")
        }
        let context = environment.context
        try storeCall { () throws(SyncError) in try context.cancel(operation.id) }
        let started = environment.sync.start(.push, session: request.attributes[Sessions.attribute])
        environment.sessions.flash(
            request, .info,
            "Sending the \(operation.kind.rawValue) of “\(label(of: operation))” again"
                + (started ? "…" : " with the push already running…"))
        return .redirect(to: "/operations")
    }
}
