import Foundation
import HTTPServer
import SyncClient

/// The Sync state section of `/settings`: the table protocol (auto, v2, v3) and each incremental
/// pull's delta token, with Reset.
struct SyncStateController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.post("/settings/protocol") { request async throws in try await saveProtocol(request) }
        router.post("/settings/tokens/reset") { request async throws in try await resetToken(request) }
    }

    private func saveProtocol(_ request: Request) async throws -> Response {
        let value = try request.form()["protocol"] ?? ""
        let change: SettingsChange
        do {
            change = try SettingsChange([.protocol: value], hasEmbeddedService: environment.embeddedURL() != nil)
        } catch { throw HTTPError(.unprocessableContent, error.message) }
        try await change.apply(environment)
        let choice = change.tableProtocol ?? .auto
        let spoken = environment.context.tableProtocol.map { " Speaking \($0.label) now." } ?? ""
        environment.sessions.flash(request, .success, "Protocol: \(choice.rawValue).\(spoken)")
        return .redirect(to: "/settings#sync-state")
    }

    private func resetToken(_ request: Request) async throws -> Response {
        let form = try request.form()
        let table = form["table"] ?? ""
        let queryId = form["queryId"]?.nilIfEmpty
        guard environment.context.tables.contains(where: { $0.name == table }) else {
            throw HTTPError(.notFound, "There is no table “\(table)” in this dashboard.")
        }
        try await environment.context.resetDeltaTokens(table: table, queryId: queryId)
        environment.sessions.flash(
            request, .success,
            "Reset \(table)\(queryId.map { "/\($0)" } ?? ""): the next sync reads every row again. "
                + "Your pending changes and conflicts are kept.")
        return .redirect(to: "/settings#sync-state")
    }
}

/// What the Sync state section shows.
struct SyncStateView: Encodable, Sendable {
    var protocols: [Option]
    /// "Datasync v3 (3.0.0)"; nil until `auto` has asked the service.
    var spoken: String?
    var tokens: [Token]
    var hasTokens: Bool

    struct Option: Encodable, Sendable {
        var value: String
        var label: String
        var selected: Bool
    }

    struct Token: Encodable, Sendable {
        var table: String
        var queryId: String
        var cursor: String
        var moved: String
        var rows: String
    }

    init(context: SyncContext) {
        let choice = context.protocolChoice
        protocols = [
            Option(value: "auto", label: "Auto (ask the service once)", selected: choice == .auto),
            Option(value: "v2", label: "Mobile Apps v2", selected: choice == .v2),
            Option(value: "v3", label: "Datasync v3", selected: choice == .v3),
        ]
        spoken = context.tableProtocol?.label
        tokens = ((try? context.deltaTokens()) ?? []).map { token in
            Token(
                table: token.table, queryId: token.queryId,
                cursor: token.updatedAt.map { "\($0) · \(token.id ?? "")" } ?? "nothing received yet",
                moved: token.movedAt.map(Display.date) ?? "never", rows: token.rows.formatted())
        }
        hasTokens = !tokens.isEmpty
    }
}
