import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/operations`: the queue in push order; discarding one (after confirmation) loses that change.
struct OperationsController: Sendable {
    let environment: DashboardEnvironment
    /// Rows shown; a longer queue says how many more there are.
    static let shownLimit = 500

    func addRoutes(to router: inout Router) {
        router.get("/operations") { request in try list(request) }
        router.get("/operations/:id/discard") { request in try confirmDiscard(request) }
        router.post("/operations/:id/discard") { request in try discard(request) }
        router.post("/operations/:id/retry") { request in try retry(request) }
    }

    func rows() throws(HTTPError) -> [OperationsPage.OperationRow] {
        let context = environment.context
        let operations = try storeCall { () throws(SyncError) in try context.operations() }
        return operations.prefix(Self.shownLimit).map { operation in
            let local = try? context.item(id: operation.itemId, in: operation.table)
            return OperationsPage.OperationRow(
                id: operation.id, sequence: operation.id, table: operation.table, kind: operation.kind.rawValue,
                state: TodoPresenter.stateLabel(operation.state), stateBadge: TodoPresenter.stateBadge(operation.state),
                attempts: operation.attempts,
                label: TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId),
                itemHref: local != nil && operation.table == DashboardEnvironment.table
                    ? "/items/\(PercentDecoding.encode(operation.itemId))" : nil,
                conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
                lastStatus: operation.lastStatus, answer: ReadableAnswer(operation.message ?? ""),
                queuedAt: TodoPresenter.date(operation.queuedAt), canRetry: operation.state == .failed)
        }
    }

    private func list(_ request: Request) throws -> Response {
        let rows = try rows()
        return environment.renderer.page(
            "operations", request, section: .operations,
            OperationsPage(operations: rows, hasOperations: !rows.isEmpty, pager: nil))
    }

    private func operation(_ request: Request) throws(HTTPError) -> TableOperation {
        guard let id = request.parameters["id"].flatMap(Int64.init) else {
            throw HTTPError(404, "There is no queued change with that number.")
        }
        let context = environment.context
        guard let operation = try storeCall({ () throws(SyncError) in try context.operation(id) }) else {
            throw HTTPError(404, "Change #\(id) is no longer queued: it was pushed or discarded already.")
        }
        return operation
    }

    private func confirmDiscard(_ request: Request) throws -> Response {
        let operation = try operation(request)
        let local = try? environment.context.item(id: operation.itemId, in: operation.table)
        return environment.renderer.page(
            "discard", request, section: .operations,
            DiscardPage(
                operation: DiscardPage.Target(
                    id: operation.id, kind: operation.kind.rawValue,
                    label: TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId),
                    hasBase: operation.base != nil)))
    }

    private func discard(_ request: Request) throws -> Response {
        let operation = try operation(request)
        let context = environment.context
        let local = try? context.item(id: operation.itemId, in: operation.table)
        let label = TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId)
        try storeCall { () throws(SyncError) in try context.discard(operation.id) }
        environment.sessions.flash(
            request, .success,
            "Discarded the \(operation.kind.rawValue) of “\(label)” — \(environment.pendingSummary()).")
        return .redirect(to: "/operations")
    }

    /// Retry of a change the service refused: it is queued again and a push starts.
    private func retry(_ request: Request) throws -> Response {
        let operation = try operation(request)
        guard operation.state == .failed else {
            throw HTTPError(409, "Change #\(operation.id) was not refused: it waits for the next push already.")
        }
        let context = environment.context
        try storeCall { () throws(SyncError) in try context.cancel(operation.id) }
        let started = environment.sync.start(.push, session: request.attributes[Sessions.attribute])
        let local = try? context.item(id: operation.itemId, in: operation.table)
        let label = TodoPresenter.label(local ?? operation.item ?? operation.base, id: operation.itemId)
        environment.sessions.flash(
            request, .info,
            "Sending the \(operation.kind.rawValue) of “\(label)” again"
                + (started ? "…" : " with the push already running…"))
        return .redirect(to: "/operations")
    }
}
