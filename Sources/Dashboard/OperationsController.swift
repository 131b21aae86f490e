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
        // Live: the queue's counts, bulk actions, changes and pager.
        router.getLive(
            "/operations", environment, template: "operations", partials: ["operations/queue"],
            section: .operations, content: listContent)
        router.get("/operations/:id/discard") { request in try confirmDiscard(request) }
        router.post("/operations/:id/discard") { request async throws in try await discard(request) }
        router.post("/operations/:id/retry") { request async throws in try await act(.retry, request) }
        router.post("/operations/:id/hold") { request async throws in try await act(.hold, request) }
        router.post("/operations/:id/release") { request async throws in try await act(.release, request) }
        router.post("/operations/bulk") { request async throws in try await bulk(request) }
    }

    /// The page of the queue the query string asks for: `?after=ID`, `?before=ID` or `?at=last`.
    static func position(_ request: Request) throws(HTTPError) -> QueuePosition {
        let mistake = "A page position is a change number, as in the Next and Previous links."
        if let id = try request.key("after", mistake: mistake) { return .after(id) }
        if let id = try request.key("before", mistake: mistake) { return .before(id) }
        return try request.atLast() ? .last : .first
    }

    /// The row of one queued change at `now`. `nextPushAt` is when the next push is due, for auto-sync
    /// to fill (nil: pushes run when asked, so a waiting change goes "on the next push").
    static func row(
        _ entry: QueuePage.Entry, now: Date = Date(), nextPushAt: Date? = nil
    ) -> OperationsPage.OperationRow {
        let operation = entry.operation
        let local = entry.localItem
        let stuck = StuckRule.reason(operation, now: now)
        func allows(_ action: QueueAction) -> Bool {
            QueueActionRule.decide(
                action, id: operation.id, state: operation.state, isHeld: operation.isHeld, earlier: entry.earlier?.id)
                == .apply
        }
        return OperationsPage.OperationRow(
            id: operation.id, sequence: operation.id, table: operation.table, kind: operation.kind.rawValue,
            state: operation.isHeld ? "held" : Display.stateLabel(operation.state),
            stateBadge: operation.isHeld ? "held" : Display.stateBadge(operation.state),
            attempts: operation.attempts,
            label: Display.title(
                local ?? operation.item ?? operation.base, table: operation.table, id: operation.itemId),
            itemId: operation.itemId,
            itemHref: local == nil ? nil : TablePreset.href(operation.table, operation.itemId),
            conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
            historyHref: HistoryController.href(operation.table, operation.itemId),
            lastStatus: operation.lastStatus, answer: ReadableAnswer(operation.message ?? ""),
            queuedAt: Display.date(operation.queuedAt), age: Self.age(of: operation.queuedAt, now: now),
            stuck: stuck.map(Self.stuckLabel), heldSince: operation.hold.map { Display.date($0.since) },
            heldReason: operation.hold?.reason,
            nextAttempt: Self.nextAttempt(entry, nextPushAt: nextPushAt),
            nextAttemptAt: nextPushAt.map { Display.date($0) },
            canRetry: allows(.retry) && (operation.state == .failed || stuck != nil),
            canHold: allows(.hold), canRelease: operation.isHeld, canDiscard: allows(.discard))
    }

    /// When the change is next sent, in words.
    static func nextAttempt(_ entry: QueuePage.Entry, nextPushAt: Date?) -> String {
        let operation = entry.operation
        if operation.isHeld { return "held: not until you release it" }
        if let earlier = entry.earlier {
            return earlier.isHeld
                ? "after #\(earlier.id), which is held" : "after #\(earlier.id) of the same item"
        }
        switch operation.state {
        case .inFlight: return "being sent now"
        case .conflict: return "after your decision"
        case .failed: return "after Retry now or an edit"
        case .pending, .attempted:
            return nextPushAt.map { "at the next push, \(Display.date($0))" } ?? "on the next push"
        }
    }

    /// "just now", "12 min", "3 h", "2 d".
    static func age(of date: Date, now: Date) -> String {
        let seconds = max(0, now.timeIntervalSince(date))
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return "\(Int(seconds / 60)) min"
        case ..<86400: return "\(Int(seconds / 3600)) h"
        default: return "\(Int(seconds / 86400)) d"
        }
    }

    /// Why a change is stuck, as the page says it.
    static func stuckLabel(_ reason: StuckRule.Reason) -> String {
        switch reason {
        case .refused: "refused"
        case .failing: "failing"
        case .old: "waiting over \(Int(StuckRule.age / 3600)) h"
        }
    }

    /// The page of the queue the request asks for: the page and its live fragments are both rendered from it.
    func listContent(_ request: Request) throws(HTTPError) -> OperationsPage {
        let position = try Self.position(request)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.operations.page(position, limit: Self.pageSize) }
        let now = Date()
        // Stuck changes first, then the others; push order within each.
        // With auto-sync on, a waiting change goes at its next attempt.
        let nextPushAt = environment.autoSync?.status.nextAttemptAt
        let rows = page.entries.map { Self.row($0, now: now, nextPushAt: nextPushAt) }
        let sorted = rows.filter { $0.stuck != nil } + rows.filter { $0.stuck == nil }
        let held = (try? context.status().held) ?? 0
        var pager: Pager?
        if page.hasEarlier || page.hasLater {
            pager = Pager(
                summary: "\(rows.count) shown of \(page.total.formatted()) queued changes",
                first: page.hasEarlier ? "/operations" : nil,
                previous: page.hasEarlier ? rows.first.map { "/operations?before=\($0.id)" } : nil,
                next: page.hasLater ? rows.last.map { "/operations?after=\($0.id)" } : nil,
                last: page.hasLater ? "/operations?at=last" : nil)
        }
        return OperationsPage(
            operations: sorted, hasOperations: !rows.isEmpty, canPush: page.total > 0, pager: pager,
            emptyMessage: position == .first
                ? "Nothing to push: every change has reached the service."
                : "This page is past the end of the queue.",
            stuckCount: rows.count { $0.stuck != nil }, heldCount: held,
            stuckAge: "\(Int(StuckRule.age / 3600)) hour")
    }

    private func operation(_ request: Request) throws(HTTPError) -> TableOperation {
        let id = try request.operationId(missing: "There is no queued change with that number.")
        let context = environment.context
        guard let operation = try storeCall({ () throws(SyncError) in try context.operations.operation(id) }) else {
            throw HTTPError(.notFound, "Change #\(id) is no longer queued: it was pushed or discarded already.")
        }
        return operation
    }

    /// The item's text as the list shows it now, else as the change carries it, else its id.
    private func label(of operation: TableOperation) -> String {
        let local = try? environment.context.table(operation.table).item(id: operation.itemId)
        return Display.title(local ?? operation.item ?? operation.base, table: operation.table, id: operation.itemId)
    }

    /// What a discard's confirmation says of `operation`.
    private func target(_ operation: TableOperation) -> DiscardPage.Target {
        DiscardPage.Target(
            id: operation.id, kind: operation.kind.rawValue, label: label(of: operation),
            hasBase: operation.base != nil)
    }

    private func confirmDiscard(_ request: Request) throws -> Response {
        environment.renderer.page(
            "discard", request, section: .operations, DiscardPage(operation: target(try operation(request))))
    }

    private func discard(_ request: Request) async throws -> Response {
        let operation = try operation(request)
        let context = environment.context
        let text = label(of: operation)
        _ = try await storeCall { () async throws(SyncError) in
            try await context.operations.perform(.discard, on: operation.id)
        }
        environment.sessions.flash(
            request, .success,
            "Discarded the \(operation.kind.rawValue) of “\(text)” — \(environment.pendingSummary()).")
        return .redirect(to: "/operations")
    }

    /// Retry now, Hold or Release of one change (the buttons of its row).
    private func act(_ action: QueueAction, _ request: Request) async throws -> Response {
        let operation = try operation(request)
        let form = try request.form()
        let report = try await QueueActions(environment: environment).perform(
            action, ids: [operation.id], reason: form["reason"], request: request)
        if let refused = report.refused.first {
            throw HTTPError(.conflict, refused.message ?? "Change #\(operation.id) cannot be changed so now.")
        }
        environment.sessions.flash(
            request, .success, "“\(label(of: operation))”: " + QueueActions.summary(report))
        return .redirect(to: "/operations")
    }

    /// The bulk form: an action for every ticked change; Discard asks first (`confirm=yes` when asked).
    private func bulk(_ request: Request) async throws -> Response {
        let form = try request.form()
        guard let action = form["action"].flatMap(QueueAction.init(rawValue:)) else {
            throw HTTPError(
                .unprocessableContent, "Choose what to do with the selected changes: retry, hold, release or discard.")
        }
        var ids: [Int64] = []
        for value in form.values("id") {
            guard let id = Int64(value), id > 0 else {
                throw HTTPError(
                    .unprocessableContent, "'\(value)' is not a change number; tick the boxes on the queue page.")
            }
            if !ids.contains(id) { ids.append(id) }
        }
        if action == .discard, form["confirm"] != "yes" {
            guard !ids.isEmpty else {
                throw HTTPError(.unprocessableContent, "Select at least one change (tick its box) first.")
            }
            let context = environment.context
            let targets = try ids.compactMap { id throws(HTTPError) in
                try storeCall { () throws(SyncError) in try context.operations.operation(id) }.map(target)
            }
            return environment.renderer.page(
                "discard-bulk", request, section: .operations,
                BulkDiscardPage(operations: targets, hasOperations: !targets.isEmpty))
        }
        let report = try await QueueActions(environment: environment).perform(
            action, ids: ids, reason: form["reason"], request: request)
        environment.sessions.flash(
            request, report.refused.isEmpty ? .success : .warning, QueueActions.summary(report))
        return .redirect(to: "/operations")
    }
}
