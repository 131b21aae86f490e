import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// `/api/...`: the dashboard's state and actions as JSON, for scripts and tests.
///
/// State-changing calls are POSTs carrying the `X-CSRF-Token` header (its value is in
/// `GET /api/status`); errors are `{"error": "..."}` with the matching status.
struct APIController: Sendable {
    let environment: DashboardEnvironment
    let csrfToken: String

    /// The body of item writes.
    struct TodoPayload: Decodable {
        var id: String?
        var text: String?
        var complete: Bool?
    }

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

    /// The body of `POST /api/settings`; absent fields stay as they are.
    struct SettingsPayload: Decodable {
        var offline: Bool?
        var pageSize: Int?
        /// How many operations a push keeps on the wire at once (1 to 64).
        var pushWindow: Int?
        /// The table service's address; "" for the embedded service.
        var remote: String?
        /// The application key sent to `remote` (only read with `remote`; absent or "" for none).
        var applicationKey: String?
        /// What becomes of queued changes when `remote` is another service: "push" or "discard".
        var onSwitch: String?
        /// The tables to sync and show (letters, digits and underscores).
        var tables: [String]?
        /// The table protocol: "auto", "v2" or "v3".
        var `protocol`: String?
        /// Seconds between automatic syncs (5 to 86,400); 0 turns auto-sync off.
        var autoSyncInterval: Int?
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

    func addRoutes(to router: inout Router) {
        router.get("/api/status") { _ in try status() }
        router.get("/api/items") { request in try items(request) }
        router.post("/api/items") { request in try add(request) }
        router.get("/api/items/:id") { request in try item(request) }
        router.post("/api/items/:id") { request in try update(request) }
        router.post("/api/items/:id/delete") { request in try delete(request) }
        router.get("/api/operations") { _ in try operations() }
        router.post("/api/operations/:id/discard") { request in try discard(request) }
        for action in [QueueAction.hold, .release, .retry] {
            router.post("/api/operations/:id/\(action.rawValue)") { request in try act(action, request) }
        }
        router.post("/api/operations/bulk") { request in try bulk(request) }
        router.get("/api/conflicts") { _ in try conflicts() }
        router.post("/api/conflicts/:id/resolve") { request async throws in try await resolve(request) }
        router.post("/api/settings") { request async throws in try await settings(request) }
        router.get("/api/settings") { _ in try savedSettings() }
        for kind in [BackgroundSync.Kind.sync, .push, .pull, .verify] {
            router.post("/api/\(kind.rawValue)") { request in
                let started = environment.sync.start(kind, session: request.attributes[Sessions.attribute])
                return Self.json(["started": started, "running": true], status: .accepted)
            }
        }
        router.post("/api/cancel") { _ async throws in
            Self.json(["cancelled": await environment.sync.cancel()])
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        JSONAnswer.response(value, status: status)
    }

    /// `GET /api/items`: one page of todos; `newer` and `older` are the cursors of the
    /// neighbouring pages (`?newer=…`, `?older=…`), absent at either end.
    struct ItemsAnswer: Encodable {
        var items: [Item]
        var total: Int?
        var newer: Int64?
        var older: Int64?
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

    private var table: SyncTable { environment.todos }

    private func status() throws -> Response {
        let header = HeaderView.read(
            context: environment.context, sync: environment.sync, autoSync: environment.autoSync?.status,
            servicePage: nil)
        return Self.json(StatusAnswer(header: header, csrfToken: csrfToken))
    }

    private func items(_ request: Request) throws -> Response {
        let query = try TodoListController.ListQuery(request)
        let page = try TodoListController(environment: environment).page(query)
        return Self.json(
            ItemsAnswer(
                items: page.items, total: page.total, newer: page.hasNewer ? page.keys.first : nil,
                older: page.hasOlder ? page.keys.last : nil))
    }

    private func found(_ request: Request) throws(HTTPError) -> Item {
        let id = request.parameters["id"] ?? ""
        let table = self.table
        guard let item = try storeCall({ () throws(SyncError) in try table.item(id: id) }) else {
            throw HTTPError(.notFound, "No todo with id '\(id)'.")
        }
        return item
    }

    private func item(_ request: Request) throws -> Response {
        Self.json(try found(request))
    }

    private func add(_ request: Request) throws -> Response {
        let payload = try request.decodeJSON(TodoPayload.self)
        let input = try Self.validated(text: payload.text, complete: payload.complete)
        var item: Item = ["text": .string(input.text), "complete": .bool(input.complete)]
        if let id = payload.id {
            guard !id.isEmpty, id.count <= 255 else {
                throw HTTPError(.unprocessableContent, "An id must have 1 to 255 characters.")
            }
            item[SystemColumn.id] = .string(id)
        }
        let table = self.table
        return Self.json(try storeCall { () throws(SyncError) in try table.insert(item) }, status: .created)
    }

    private func update(_ request: Request) throws -> Response {
        var item = try found(request)
        let payload = try request.decodeJSON(TodoPayload.self)
        let input = try Self.validated(
            text: payload.text ?? item["text"]?.stringValue, complete: payload.complete ?? item["complete"]?.boolValue)
        item["text"] = .string(input.text)
        item["complete"] = .bool(input.complete)
        let table = self.table
        return Self.json(try storeCall { () throws(SyncError) in try table.update(item) })
    }

    private func delete(_ request: Request) throws -> Response {
        let item = try found(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let table = self.table
        try storeCall { () throws(SyncError) in try table.delete(id: id) }
        return Self.json(["deleted": id])
    }

    private static func validated(text: String?, complete: Bool?) throws(HTTPError) -> TodoInput {
        switch TodoInput.parse(text: text, complete: complete.map { $0 ? "true" : "false" }) {
        case .success(let input): return input
        case .failure(let invalid): throw HTTPError(.unprocessableContent, invalid.message)
        }
    }

    private func operations() throws -> Response {
        let context = environment.context
        return Self.json(try storeCall { () throws(SyncError) in try context.operations() })
    }

    private func discard(_ request: Request) throws -> Response {
        guard let id = request.parameters["id"].flatMap(Int64.init) else {
            throw HTTPError(.notFound, "No such operation.")
        }
        let context = environment.context
        try storeCall { () throws(SyncError) in try context.discard(id) }
        return Self.json(["discarded": id])
    }

    /// `POST /api/operations/{id}/hold|release|retry`: the operation as it is now (null once it left
    /// the queue) and what the action did; a refusal is a 409 with the reason.
    private func act(_ action: QueueAction, _ request: Request) throws -> Response {
        guard let id = request.parameters["id"].flatMap(Int64.init) else {
            throw HTTPError(.notFound, "No such operation.")
        }
        let payload = request.body.isEmpty ? QueueActionPayload() : try request.decodeJSON(QueueActionPayload.self)
        let report = try QueueActions(environment: environment).perform(
            action, ids: [id], reason: payload.reason, request: request)
        if let refused = report.refused.first {
            let context = environment.context
            let exists = try storeCall { () throws(SyncError) in try context.operation(id) } != nil
            throw HTTPError(exists ? .conflict : .notFound, refused.message ?? "Operation #\(id) was refused.")
        }
        let context = environment.context
        return Self.json(
            ActionAnswer(
                action: action, outcome: report.results.first?.outcome ?? .unchanged,
                pushStarted: report.pushStarted,
                operation: try storeCall { () throws(SyncError) in try context.operation(id) }))
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
    private func bulk(_ request: Request) throws -> Response {
        let payload = try request.decodeJSON(QueueActionPayload.self)
        guard let text = payload.action, let action = QueueAction(rawValue: text) else {
            throw HTTPError(.unprocessableContent, "action must be \"hold\", \"release\", \"retry\" or \"discard\".")
        }
        guard let ids = payload.ids else {
            throw HTTPError(.unprocessableContent, "ids must list the operations' ids, as in {\"ids\": [1, 2]}.")
        }
        return Self.json(
            try QueueActions(environment: environment).perform(
                action, ids: ids, reason: payload.reason, request: request))
    }

    private func conflicts() throws -> Response {
        let context = environment.context
        return Self.json(try storeCall { () throws(SyncError) in try context.conflicts() })
    }

    private func resolve(_ request: Request) async throws -> Response {
        guard let id = request.parameters["id"].flatMap(Int64.init) else {
            throw HTTPError(.notFound, "No such conflict.")
        }
        let payload = try request.decodeJSON(ResolvePayload.self)
        guard let resolution = ConflictResolution(rawValue: payload.choice) else {
            throw HTTPError(.unprocessableContent, "choice must be use-client, use-server or cancel.")
        }
        do {
            let outcome = try await environment.context.resolve(id, with: resolution)
            return Self.json(["outcome": outcome?.rawValue ?? "pending"])
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
        /// Seconds between automatic syncs; 0 when auto-sync is off.
        var autoSyncInterval: Int
    }

    private func savedSettings() throws -> Response {
        let settings = environment.settings.settings
        let context = environment.context
        return Self.json(
            SettingsAnswer(
                remote: settings.remoteURL, pageSize: settings.pageSize,
                pushWindow: settings.pushWindow ?? SyncConfiguration.defaultPushWindow, offline: context.isOffline,
                tables: try storeCall { () throws(SyncError) in try context.syncedTables() },
                protocol: context.protocolChoice, spoken: context.tableProtocol,
                autoSyncInterval: settings.autoSyncInterval.map { Int($0) } ?? 0))
    }

    private func settings(_ request: Request) async throws -> Response {
        let payload = try request.decodeJSON(SettingsPayload.self)
        let given: [SettingsChange.Setting: String?] = [
            .remote: payload.remote, .applicationKey: payload.applicationKey, .onSwitch: payload.onSwitch,
            .pageSize: payload.pageSize.map(String.init), .pushWindow: payload.pushWindow.map(String.init),
            .autoSyncInterval: payload.autoSyncInterval.map(String.init), .offline: payload.offline.map(String.init),
            .protocol: payload.protocol,
        ]
        let change: SettingsChange
        do {
            change = try SettingsChange(
                given.compactMapValues { $0 }, tables: payload.tables,
                hasEmbeddedService: environment.embeddedURL() != nil)
        } catch { throw HTTPError(.unprocessableContent, error.message) }
        do {
            try await change.apply(environment)
        } catch SyncError.remoteSwitchRefused(let refusal) {
            return Self.json(
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
