import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/journal`: every conflict outcome (by a person, a policy or a merge), newest first, with
/// filters, paging, export as JSON Lines, Overturn per entry and Undo per bulk decision.
struct JournalController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        // Live: the entries for the page's filters and cursor.
        router.getLive(
            "/journal", environment, template: "journal", partials: ["journal/list"], section: .journal,
            content: listContent)
        router.get("/journal.jsonl") { request in try export(request) }
        router.post("/journal/:id/overturn") { request async throws in try await overturn(request) }
        router.post("/journal/batches/:batch/undo") { request async throws in try await undo(request) }
    }

    /// The query of a request's filters (`decision`, `item`, `q`, `batch`, `before`, `limit`).
    static func query(_ request: Request) throws(HTTPError) -> JournalQuery {
        let known = JournalEntry.Decision.allCases.map(\.rawValue).joined(separator: ", ")
        return JournalQuery(
            decision: try request.query(
                "decision", as: JournalEntry.Decision.init(rawValue:),
                mistake: { "There is no decision '\($0)'; use one of \(known)." }),
            itemId: request.query("item"), text: request.query("q"), batch: request.query("batch"),
            before: try request.query(
                "before", as: { Int64($0) }, mistake: { _ in "'before' must be an entry number." }),
            limit: try request.limit(default: 25, maximum: 100))
    }

    /// The entries the request's filters and cursor ask for: the page and its live fragments are
    /// both rendered from it.
    func listContent(_ request: Request) throws(HTTPError) -> JournalView {
        let query = try Self.query(request)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.journal.entries(query) }
        let blocked = try storeCall { () throws(SyncError) in try context.journal.blockedByLocalChanges(page.entries) }
        let tables = Dictionary(uniqueKeysWithValues: context.tables.map { ($0.name, $0) })
        let entries = page.entries.map { entry in
            JournalView.Entry(
                entry, description: tables[entry.table],
                blocked: blocked.contains(entry.id))
        }
        let filters = Self.filterItems(query)
        return JournalView(
            entries: entries, hasEntries: !entries.isEmpty, decision: query.decision?.rawValue,
            item: query.itemId, search: query.text, batch: query.batch,
            decisions: JournalEntry.Decision.allCases.map { decision in
                JournalView.Option(
                    value: decision.rawValue, label: decision.label, selected: decision == query.decision)
            },
            total: try storeCall { () throws(SyncError) in try context.journal.count() }.formatted(),
            retention: try storeCall { () throws(SyncError) in try context.retention(of: .journal) }.formatted(),
            olderURL: page.next.map { "/journal" + Self.queryString(filters + [("before", String($0))]) },
            newestURL: query.before == nil ? nil : "/journal" + Self.queryString(filters),
            exportURL: "/journal.jsonl" + Self.queryString(filters))
    }

    /// The filters of a query as query-string items (no cursor).
    static func filterItems(_ query: JournalQuery) -> [(String, String)] {
        var items: [(String, String)] = []
        if let decision = query.decision { items.append(("decision", decision.rawValue)) }
        if let item = query.itemId { items.append(("item", item)) }
        if let text = query.text { items.append(("q", text)) }
        if let batch = query.batch { items.append(("batch", batch)) }
        if query.limit != 25 { items.append(("limit", String(query.limit))) }
        return items
    }

    static func queryString(_ items: [(String, String)]) -> String {
        var components = URLComponents()
        components.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        guard !items.isEmpty, let query = components.percentEncodedQuery else { return "" }
        return "?" + query.replacingOccurrences(of: "+", with: "%2B")
    }

    /// Every entry matching the filters, newest first, one JSON object per line.
    private func export(_ request: Request) throws -> Response {
        var query = try Self.query(request)
        query.limit = 100
        query.before = nil
        var body = Data()
        let context = environment.context
        while true {
            let page = try storeCall { () throws(SyncError) in try context.journal.entries(query) }
            for entry in page.entries {
                body.append(try JSONAnswer.encoder.encode(entry))
                body.append(0x0A)
            }
            guard let next = page.next else { break }
            query.before = next
        }
        let headers: HTTPFields = [
            .contentType: "application/jsonl; charset=utf-8",
            .contentDisposition: "attachment; filename=\"journal.jsonl\"",
        ]
        return Response(status: .ok, headers: headers, body: body)
    }

    private func overturn(_ request: Request) async throws -> Response {
        let id = request.parameters["id"] ?? ""
        let back = DashboardEnvironment.safeBack(try request.form()["back"], fallback: "/journal")
        do {
            let outcome = try await environment.context.journal.overturn(id)
            switch outcome {
            case .pushed:
                environment.sessions.flash(
                    request, .success, "Overturned: the values that lost are on the service now.")
            case .conflict:
                environment.sessions.flash(
                    request, .warning,
                    "The service changed it since that decision: this is a new conflict. Choose again.")
                if let conflict = try? environment.context.conflicts.all().last {
                    return .redirect(to: "/conflicts/\(conflict.id)")
                }
            default:
                environment.sessions.flash(request, .error, "The service refused the overturn; see the queue.")
            }
        } catch  where error is ConflictDecisionError || error is SyncError {
            environment.sessions.flash(request, .error, String(describing: error))
        }
        return .redirect(to: back)
    }

    private func undo(_ request: Request) async throws -> Response {
        let batch = request.parameters["batch"] ?? ""
        do {
            let undo = try await environment.context.journal.undo(batch: batch)
            let pushed = undo.overturned.values.filter { $0 == .pushed }.count
            let conflicts = undo.overturned.values.filter { $0 == .conflict }.count
            var message = "Undid \(pushed) of \(undo.overturned.count) decisions."
            if conflicts > 0 { message += " \(conflicts) became new conflicts: the service changed them since." }
            environment.sessions.flash(request, pushed == undo.overturned.count ? .success : .warning, message)
            return .redirect(to: "/journal" + Self.queryString([("batch", undo.batch)]))
        } catch  where error is ConflictDecisionError || error is SyncError {
            environment.sessions.flash(request, .error, String(describing: error))
        }
        return .redirect(to: "/journal" + Self.queryString([("batch", batch)]))
    }
}
