import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// The decisions beyond Use Client / Use Server / Cancel: the per-field pick
/// (`POST /conflicts/{operation}/pick`) and bulk decisions (`/conflicts/bulk`), plus their JSON API
/// and the conflict policies (`/api/policies`).
struct ConflictDecisionsController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.post("/conflicts/:id/pick") { request async throws in try await pick(request) }
        router.get("/conflicts/bulk") { request in try bulkPreview(request) }
        router.post("/conflicts/bulk") { request async throws in try await bulkApply(request) }
        router.post("/settings/policies") { request async throws in try await savePolicies(request) }
    }

    /// Adds its JSON routes to the dashboard's `/api` group.
    func addAPIRoutes(to api: inout Router) {
        api.post("/conflicts/:id/pick") { request async throws in try await apiPick(request) }
        api.get("/policies") { _ in try policies() }
        api.post("/policies") { request async throws in try await setPolicy(request) }
        api.get("/journal") { request in try apiJournal(request) }
        api.post("/journal/:id/overturn") { request async throws in try await apiOverturn(request) }
    }

    // MARK: Per-field pick

    private func pick(_ request: Request) async throws -> Response {
        let id = try request.operationId(missing: "There is no conflict with that number.")
        let picks = try ConflictDecisionView.picks(try request.form().pairs)
        do {
            let outcome = try await environment.context.conflicts.resolve(id, picking: picks)
            if outcome == .conflict {
                environment.sessions.flash(
                    request, .warning, "The server changed again meanwhile: here is its newest value. Choose again.")
                return .redirect(to: "/conflicts/\(id)")
            }
            environment.sessions.flash(
                request, outcome == .pushed ? .success : .error,
                outcome == .pushed
                    ? "Pushed the values you picked to the service."
                    : "The server refused the picked values; see the queue for its message.")
        } catch  where error is ConflictDecisionError || error is SyncError {
            environment.sessions.flash(request, .error, String(describing: error))
            return .redirect(to: "/conflicts/\(id)")
        }
        return .redirect(to: ConflictsController.next(after: id, context: environment.context))
    }

    struct PickPayload: Decodable {
        var fields: [String: String]
    }

    private func apiPick(_ request: Request) async throws -> Response {
        let id = try request.operationId(missing: "There is no conflict with that number.")
        let payload = try request.decodeJSON(PickPayload.self)
        let picks = try ConflictDecisionView.picks(payload.fields.map { ("pick." + $0.key, $0.value) })
        do {
            let outcome = try await environment.context.conflicts.resolve(id, picking: picks)
            return JSONAnswer.response(["outcome": outcome.rawValue])
        } catch let error as ConflictDecisionError {
            throw error.httpError
        } catch let error as SyncError {
            throw error.httpError
        }
    }

    // MARK: Bulk decisions

    /// The chosen conflicts: `ids` checked in the list, or every conflict matching `q` with `scope=all`.
    private func chosen(_ pairs: [(name: String, value: String)]) throws(HTTPError) -> [Int64] {
        let context = environment.context
        if pairs.contains(where: { $0.name == "scope" && $0.value == "all" }) {
            let text = pairs.first { $0.name == "q" }?.value ?? ""
            return try storeCall { () throws(SyncError) in try context.conflicts.all() }
                .filter { ConflictsController.matches($0, text: text) }.map(\.id)
        }
        var ids: [Int64] = []
        for pair in pairs where pair.name == "ids" {
            guard let id = Int64(pair.value) else {
                throw HTTPError(.badRequest, "“\(pair.value)” is not a change number.")
            }
            ids.append(id)
        }
        guard !ids.isEmpty else {
            throw HTTPError(.badRequest, "Select at least one conflict, or all matching the filter.")
        }
        return ids
    }

    private func resolution(_ pairs: [(name: String, value: String)]) throws(HTTPError) -> ConflictResolution {
        switch pairs.first(where: { $0.name == "choice" })?.value {
        case "use-client": .useClient
        case "use-server": .useServer
        default: throw HTTPError(.badRequest, "Choose Use Client or Use Server for the selected conflicts.")
        }
    }

    private func bulkPreview(_ request: Request) throws -> Response {
        let pairs = request.queryItems
        let ids = try chosen(pairs)
        let resolution = try resolution(pairs)
        let context = environment.context
        let preview = try storeCall { () throws(SyncError) in try context.conflicts.bulkPreview(ids, with: resolution) }
        return environment.renderer.page(
            "conflict/bulk", request, section: .conflicts, BulkPreviewView(preview))
    }

    private func bulkApply(_ request: Request) async throws -> Response {
        let form = try request.form()
        let ids = try chosen(form.pairs.filter { $0.name == "ids" })
        let resolution = try resolution(form.pairs)
        do {
            let bulk = try await environment.context.conflicts.resolve(ids, with: resolution)
            let pushed = bulk.outcomes.values.filter { $0 == .pushed || $0 == .resolvedByServer }.count
            let again = bulk.outcomes.values.filter { $0 == .conflict }.count
            var message =
                "\(resolution == .useClient ? "Used your values" : "Took the server's values") for \(pushed) "
                + "conflict\(pushed == 1 ? "" : "s"). Undo them here in one step if that was wrong."
            if again > 0 { message += " \(again) changed again on the service and wait for you." }
            environment.sessions.flash(request, again == 0 ? .success : .warning, message)
            return .redirect(to: "/journal" + JournalController.queryString([("batch", bulk.batch)]))
        } catch let error as SyncError {
            environment.sessions.flash(request, .error, error.description)
            return .redirect(to: "/conflicts")
        }
    }

    // MARK: Policies and journal as JSON

    struct PolicyPayload: Decodable {
        var table: String?
        var policy: String
    }

    private func savePolicies(_ request: Request) async throws -> Response {
        let form = try request.form()
        var changes: [(String, ConflictPolicy)] = []
        for (name, value) in form.pairs where name.hasPrefix("policy.") {
            guard let policy = ConflictPolicy(rawValue: value) else {
                throw HTTPError(.badRequest, "“\(value)” is not a policy; choose ask, merge, serverWins or clientWins.")
            }
            changes.append((String(name.dropFirst(7)), policy))
        }
        var retention: Int?
        if let text = form["retention"], !text.isEmpty {
            guard let count = Int(text), (1...10_000_000).contains(count) else {
                throw HTTPError(
                    .unprocessableContent, "Journal entries kept must be a whole number from 1 to 10,000,000.")
            }
            retention = count
        }
        let context = environment.context
        try await storeCall { () async throws(SyncError) in
            for (table, policy) in changes { try await context.conflicts.setPolicy(policy, for: table) }
            if let retention { try await context.setRetention(of: .journal, to: retention) }
        }
        environment.sessions.flash(request, .success, "Conflict settings saved.")
        return .redirect(to: "/settings#policies")
    }

    private func policies() throws -> Response {
        let context = environment.context
        let policies = try storeCall { () throws(SyncError) in try context.conflicts.policies() }
        return JSONAnswer.response(policies.mapValues(\.rawValue))
    }

    private func setPolicy(_ request: Request) async throws -> Response {
        let payload = try request.decodeJSON(PolicyPayload.self)
        guard let policy = ConflictPolicy(rawValue: payload.policy) else {
            throw HTTPError(.unprocessableContent, "policy must be ask, merge, serverWins or clientWins.")
        }
        let context = environment.context
        let table = payload.table ?? DashboardEnvironment.table
        try await storeCall { () async throws(SyncError) in try await context.conflicts.setPolicy(policy, for: table) }
        return try policies()
    }

    private func apiJournal(_ request: Request) throws -> Response {
        let query = try JournalController.query(request)
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.journal.entries(query) }
        struct Answer: Encodable {
            var entries: [JournalEntry]
            var next: Int64?
        }
        return JSONAnswer.response(Answer(entries: page.entries, next: page.next))
    }

    private func apiOverturn(_ request: Request) async throws -> Response {
        let id = request.parameters["id"] ?? ""
        do {
            let outcome = try await environment.context.journal.overturn(id)
            return JSONAnswer.response(["outcome": outcome.rawValue])
        } catch let error as ConflictDecisionError {
            throw error.httpError
        } catch let error as SyncError {
            throw error.httpError
        }
    }
}
