import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// `/conflicts` and `/conflicts/{operation}`: every conflict, and the page that settles one with
/// Use Client, Use Server or Cancel.
struct ConflictsController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        // Live: every conflict matching the page's filter.
        router.getLive(
            "/conflicts", environment, template: "conflicts", partials: ["conflicts/list"], section: .conflicts,
            content: listContent)
        router.get("/conflicts/:id") { request in try show(request) }
        router.post("/conflicts/:id/resolve") { request async throws in try await resolve(request) }
    }

    func summaries(matching text: String = "") throws(HTTPError) -> [ConflictsPage.Summary] {
        let context = environment.context
        return try storeCall { () throws(SyncError) in try context.conflicts.all() }.filter {
            Self.matches($0, text: text)
        }.map { conflict in
            let table =
                context.tables.first { $0.name == conflict.operation.table }
                ?? TableDescription(name: conflict.operation.table, columns: [])
            return ConflictsPage.Summary(
                id: conflict.id, itemId: conflict.operation.itemId, table: conflict.operation.table,
                kind: conflict.operation.kind.rawValue,
                title: Display.title(
                    conflict.clientItem ?? conflict.serverItem ?? conflict.base, table: conflict.operation.table,
                    id: conflict.operation.itemId),
                client: conflict.clientItem.map {
                    Display.words($0, differingFrom: conflict.base ?? conflict.serverItem, table: table)
                } ?? "(deleted here)",
                server: conflict.serverItem.map {
                    Display.words($0, differingFrom: conflict.base ?? conflict.clientItem, table: table)
                } ?? "(deleted on the server)",
                when: Display.date(conflict.error.recordedAt))
        }
    }

    /// Every conflict matching the request's `q`: the page and its live fragments are both rendered from it.
    func listContent(_ request: Request) throws(HTTPError) -> ConflictsPage {
        let text = request.query("q") ?? ""
        let conflicts = try summaries(matching: text)
        return ConflictsPage(
            conflicts: conflicts, hasConflicts: !conflicts.isEmpty, count: conflicts.count, q: text.nilIfEmpty
        )
    }

    /// Whether a conflict's todo (any of its copies, or its id) contains `text`, ignoring case; "" matches all.
    static func matches(_ conflict: SyncConflict, text: String) -> Bool {
        guard !text.isEmpty else { return true }
        return [conflict.clientItem, conflict.serverItem, conflict.base].contains { item in
            item?["text"]?.stringValue?.localizedCaseInsensitiveContains(text) == true
        } || conflict.operation.itemId.localizedCaseInsensitiveContains(text)
    }

    /// Where to go after settling `id`: the next conflict in order (wrapping around), else the list.
    static func next(after id: Int64, context: SyncContext) -> String {
        let remaining = ((try? context.conflicts.all()) ?? []).map(\.id).filter { $0 != id }
        let next = remaining.first { $0 > id } ?? remaining.first
        return next.map { "/conflicts/\($0)" } ?? "/conflicts"
    }

    private func conflict(_ request: Request) throws(HTTPError) -> SyncConflict {
        let id = try request.operationId(missing: "There is no conflict with that number.")
        let context = environment.context
        guard let conflict = try storeCall({ () throws(SyncError) in try context.conflicts.conflict(id) }) else {
            throw HTTPError(
                .notFound, "Change #\(id) is not in conflict any more: it was resolved, pushed or discarded.")
        }
        return conflict
    }

    private func show(_ request: Request) throws -> Response {
        let conflict = try conflict(request)
        let table = environment.context.tables.first { $0.name == conflict.operation.table }
        let comparison = FieldComparison(
            fields: conflict.fields(columns: table?.columnNames ?? []).map(\.name), of: table,
            copies: [
                .init(side: .base, item: conflict.base, heading: "Base", note: "last synced"),
                .init(side: .client, item: conflict.clientItem, heading: "Client", note: "yours"),
                .init(side: .server, item: conflict.serverItem, heading: "Server"),
            ])
        let title = Display.title(
            conflict.clientItem ?? conflict.base ?? conflict.serverItem, table: conflict.operation.table,
            id: conflict.operation.itemId)
        let picks = try ConflictDecisionView.picks(request.queryItems)
        let decide = ConflictDecisionView(
            conflict, context: environment.context, picks: picks, previewing: !picks.isEmpty)
        return environment.renderer.page(
            "conflict", request, section: .conflicts,
            ConflictPage(
                id: conflict.id, itemId: conflict.operation.itemId, title: title, explanation: explanation(conflict),
                historyHref: HistoryController.href(conflict.operation.table, conflict.operation.itemId),
                comparison: comparison,
                editAgainstEdit: decide.canPick, decide: decide))
    }

    private func explanation(_ conflict: SyncConflict) -> String {
        let noun = TablePreset.of(conflict.operation.table).noun
        if conflict.goneFromService || conflict.restoredOlder {
            // The service's own words: when it went back, and what that did to this row.
            return conflict.error.message
                + (conflict.goneFromService
                    ? " Use Client adds your \(noun) to the service again; Use Server removes it here."
                    : " Use Client puts your values back on the service; Use Server takes the restored ones.")
        }
        if conflict.deletedOnServer {
            return "Someone deleted this \(noun) on the service while you changed it here."
        }
        switch conflict.operation.kind {
        case .insert: return "The service already has a \(noun) with this id, with other values."
        case .update: return "Someone changed this \(noun) on the service after you started editing it."
        case .delete: return "Someone changed this \(noun) on the service, and you deleted it here."
        }
    }

    private func resolve(_ request: Request) async throws -> Response {
        let conflict = try conflict(request)
        let choice = try request.form()["choice"] ?? ""
        guard let resolution = ConflictResolution(rawValue: choice) else {
            throw HTTPError(.badRequest, "Choose Use Client, Use Server or Cancel.")
        }
        let outcome: OperationOutcome?
        do {
            outcome = try await environment.context.conflicts.resolve(conflict.id, with: resolution)
        } catch let error as SyncError {
            environment.sessions.flash(request, .error, error.description)
            return .redirect(to: "/conflicts/\(conflict.id)")
        }
        let (kind, message) = Self.describe(resolution, outcome)
        environment.sessions.flash(request, kind, message)
        if case .conflict? = outcome { return .redirect(to: "/conflicts/\(conflict.id)") }
        return .redirect(to: Self.next(after: conflict.id, context: environment.context))
    }

    static func describe(_ resolution: ConflictResolution, _ outcome: OperationOutcome?) -> (Flash.Kind, String) {
        switch (resolution, outcome) {
        case (.useClient, .conflict?):
            (.warning, "The server changed again meanwhile: here is its newest value. Choose again.")
        case (.useClient, .failed?):
            (.error, "The server refused your value; see the queue for its message.")
        case (.useClient, _):
            (.success, "Kept your value and pushed it to the service.")
        case (.useServer, _):
            (.success, "Took the server's value; your change was dropped.")
        case (.cancel, _):
            (.info, "Left your change pending; it will conflict again on the next sync.")
        }
    }
}
