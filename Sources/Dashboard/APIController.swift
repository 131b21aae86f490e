import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/api/...`: the dashboard's one JSON surface, for scripts and tests (the pages answer HTML only):
/// status, queue, conflicts, settings and the sync actions; rows of every table are
/// ``DataAPIController``'s.
///
/// State-changing calls are POSTs carrying the `X-CSRF-Token` header (its value is in
/// `GET /api/status`); errors are `{"error": "..."}` with the matching status.
struct APIController: Sendable {
    let environment: DashboardEnvironment
    let csrfToken: String

    /// The body of `POST /api/operations/{id}/hold` (optional) and `POST /api/operations/bulk`.
    struct QueueActionPayload: Decodable {
        /// With bulk: "hold", "release", "retry" or "discard".
        var action: String?
        /// With bulk: the operations' ids.
        var ids: [Int64]?
        /// Why a hold is made (up to 500 characters).
        var reason: String?
    }

    struct ResolvePayload: Decodable {
        var choice: String
    }

    /// The 409 answer to a switch refused while changes are queued.
    struct SwitchRefusedAnswer: Encodable {
        var error: String
        var from: String
        var to: String
        var pending: Int
        var conflicts: Int
        var failed: Int
        /// The values `onSwitch` accepts.
        var choices = RemoteSwitchChoice.allCases.map(\.rawValue)
    }

    /// Adds its routes to the dashboard's `/api` group (their patterns under it).
    func addRoutes(to api: inout Router) {
        api.get("/status") { _ in try status() }
        api.get("/operations") { _ in try operations() }
        api.post("/operations/:id/discard") { request async throws in try await discard(request) }
        for action in [QueueAction.hold, .release, .retry] {
            api.post("/operations/:id/\(action.rawValue)") { request async throws in
                try await act(action, request)
            }
        }
        api.post("/operations/bulk") { request async throws in try await bulk(request) }
        api.get("/conflicts") { _ in try conflicts() }
        api.post("/conflicts/:id/resolve") { request async throws in try await resolve(request) }
        api.post("/settings") { request async throws in try await settings(request) }
        api.get("/settings") { _ in try savedSettings() }
        for kind in [BackgroundSync.Kind.sync, .push, .pull, .verify] {
            api.post("/\(kind.rawValue)") { request in
                let started = environment.sync.start(kind, session: request.attributes[Sessions.attribute])
                return JSONAnswer.response(["started": started, "running": true], status: .accepted)
            }
        }
        api.post("/cancel") { _ async throws in
            JSONAnswer.response(["cancelled": await environment.sync.cancel()])
        }
    }

    /// `GET /api/status`: the header every page shows, plus the CSRF token scripts need.
    struct StatusAnswer: Encodable {
        var header: HeaderView
        var csrfToken: String

        private enum CodingKeys: String, CodingKey { case csrfToken }

        /// The header's fields and `csrfToken`, side by side in one object.
        func encode(to encoder: any Encoder) throws {
            try header.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(csrfToken, forKey: .csrfToken)
        }
    }

    private func status() throws -> Response {
        let header = HeaderView.read(
            context: environment.context, sync: environment.sync, autoSync: environment.autoSync?.status,
            servicePage: nil)
        return JSONAnswer.response(StatusAnswer(header: header, csrfToken: csrfToken))
    }

    private func operations() throws -> Response {
        let context = environment.context
        return JSONAnswer.response(try storeCall { () throws(SyncError) in try context.operations.all() })
    }

    private func discard(_ request: Request) async throws -> Response {
        let id = try request.operationId(missing: "No such operation.")
        let context = environment.context
        _ = try await storeCall { () async throws(SyncError) in try await context.operations.perform(.discard, on: id) }
        return JSONAnswer.response(["discarded": id])
    }

    /// `POST /api/operations/{id}/hold|release|retry`: the operation as it is now (null once it left
    /// the queue) and what the action did; a refusal is a 409 with the reason.
    private func act(_ action: QueueAction, _ request: Request) async throws -> Response {
        let id = try request.operationId(missing: "No such operation.")
        let payload = request.body.isEmpty ? QueueActionPayload() : try request.decodeJSON(QueueActionPayload.self)
        let report = try await QueueActions(environment: environment).perform(
            action, ids: [id], reason: payload.reason, request: request)
        if let refused = report.refused.first {
            let context = environment.context
            let exists = try storeCall { () throws(SyncError) in try context.operations.operation(id) } != nil
            throw HTTPError(exists ? .conflict : .notFound, refused.message ?? "Operation #\(id) was refused.")
        }
        let context = environment.context
        return JSONAnswer.response(
            ActionAnswer(
                action: action, outcome: report.results.first?.outcome ?? .unchanged,
                pushStarted: report.pushStarted,
                operation: try storeCall { () throws(SyncError) in try context.operations.operation(id) }))
    }

    /// What `POST /api/operations/{id}/hold|release|retry` answers.
    struct ActionAnswer: Encodable {
        var action: QueueAction
        var outcome: QueueActionResult.Outcome
        var pushStarted: Bool
        var operation: TableOperation?
    }

    /// `POST /api/operations/bulk` with `{"action": "hold", "ids": [1, 2], "reason": "…"}`: the outcome
    /// of each operation (done, unchanged or refused with a message).
    private func bulk(_ request: Request) async throws -> Response {
        let payload = try request.decodeJSON(QueueActionPayload.self)
        guard let text = payload.action, let action = QueueAction(rawValue: text) else {
            throw HTTPError(.unprocessableContent, "action must be \"hold\", \"release\", \"retry\" or \"discard\".")
        }
        guard let ids = payload.ids else {
            throw HTTPError(.unprocessableContent, "ids must list the operations' ids, as in {\"ids\": [1, 2]}.")
        }
        return JSONAnswer.response(
            try await QueueActions(environment: environment).perform(
                action, ids: ids, reason: payload.reason, request: request))
    }

    private func conflicts() throws -> Response {
        let context = environment.context
        return JSONAnswer.response(try storeCall { () throws(SyncError) in try context.conflicts.all() })
    }

    private func resolve(_ request: Request) async throws -> Response {
        let id = try request.operationId(missing: "No such conflict.")
        let payload = try request.decodeJSON(ResolvePayload.self)
        guard let resolution = ConflictResolution(rawValue: payload.choice) else {
            throw HTTPError(.unprocessableContent, "choice must be use-client, use-server or cancel.")
        }
        do {
            let outcome = try await environment.context.conflicts.resolve(id, with: resolution)
            return JSONAnswer.response(["outcome": outcome?.rawValue ?? "pending"])
        } catch let error as SyncError {
            throw error.httpError
        }
    }

    /// `GET /api/settings`: what the settings page shows (never the token itself).
    struct SettingsAnswer: Encodable {
        var remote: String?
        var pageSize: Int
        var pushWindow: Int
        var offline: Bool
        var tables: [String]
        /// The protocol setting ("auto", "v2", "v3"), and the one spoken (nil: not found out yet).
        var `protocol`: ProtocolChoice
        var spoken: TableProtocol?
        /// How the token is sent ("auto", "zumo", "bearer").
        var authStyle: String
        /// Seconds between automatic syncs; 0 when auto-sync is off.
        var autoSyncInterval: Int
    }

    private func savedSettings() throws -> Response {
        let settings = environment.settings.settings
        let context = environment.context
        return JSONAnswer.response(
            SettingsAnswer(
                remote: settings.remoteURL, pageSize: settings.pageSize,
                pushWindow: settings.pushWindow ?? SyncConfiguration.defaultPushWindow, offline: context.isOffline,
                tables: try storeCall { () throws(SyncError) in try context.syncedTables() },
                protocol: context.protocolChoice, spoken: context.tableProtocol,
                authStyle: SettingsChange.TokenHeader(context.authStyleChoice).rawValue,
                autoSyncInterval: settings.autoSyncInterval.map { Int($0) } ?? 0))
    }

    /// `POST /api/settings`: an object of settings named as ``SettingsChange/Setting`` names them
    /// (`{"pageSize": 20, "offline": true, "tables": ["todoitem"]}`); absent or null ones stay as they
    /// are, and an unknown one is refused.
    private func settings(_ request: Request) async throws -> Response {
        guard case .object(let members) = try request.decodeJSON(JSONValue.self) else {
            throw HTTPError(.badRequest, #"Send the settings as a JSON object, such as {"offline": true}."#)
        }
        var given: [SettingsChange.Setting: String] = [:]
        var tables: [String]?
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            switch (SettingsChange.Setting(rawValue: name), value) {
            case (_?, .null): continue
            case (.tables?, .array(let names)) where names.allSatisfy { $0.stringValue != nil }:
                tables = names.compactMap(\.stringValue)
            case (let setting?, .string(let text)) where setting != .tables: given[setting] = text
            case (let setting?, .bool(let flag)) where setting != .tables: given[setting] = String(flag)
            case (let setting?, .number(let number)) where setting != .tables:
                given[setting] = number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : "\(number)"
            default:
                throw HTTPError(
                    .unprocessableContent, "'\(name)' is not a setting, or not of its type (\(value.jsonText)).")
            }
        }
        let change: SettingsChange
        do {
            change = try SettingsChange(
                given, tables: tables, hasEmbeddedService: environment.embeddedURL() != nil)
        } catch { throw HTTPError(.unprocessableContent, error.message) }
        do {
            try await change.apply(environment)
        } catch SyncError.remoteSwitchRefused(let refusal) {
            return JSONAnswer.response(
                SwitchRefusedAnswer(
                    error: SyncError.remoteSwitchRefused(refusal).description
                        + " Send the settings again with \"onSwitch\": \"push\" or \"discard\".",
                    from: refusal.from.description, to: refusal.to.description, pending: refusal.pending,
                    conflicts: refusal.conflicts, failed: refusal.failed),
                status: .conflict)
        } catch let error as SyncError {
            throw error.httpError
        }
        return try status()
    }
}
