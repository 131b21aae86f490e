import Foundation
import HTTPServer
import HTTPTypes
import SyncClient

/// `/settings`: remote address, application key, sign-in token, pull page size, push window,
/// auto-sync and offline mode.
struct SettingsController: Sendable {
    let environment: DashboardEnvironment

    /// The settings form as typed, with a message per field when something is wrong.
    struct Form: Encodable, Sendable {
        var remote: String
        var key: String
        var pageSize: String
        var pushWindow: String
        /// Seconds between automatic syncs; empty or 0: off.
        var autoSync: String
        var offline: Bool
        /// The saved token as it may be shown (never the token itself); nil when none is set.
        var tokenHint: String?
        /// How the token is sent: each choice, the one in force selected.
        var tokenHeaders: [TokenHeaderChoice]
        var remoteError: String?
        var keyError: String?
        var pageSizeError: String?
        var pushWindowError: String?
        var autoSyncError: String?
        var tokenError: String?
    }

    /// One choice of the "Send the token as" list.
    struct TokenHeaderChoice: Encodable, Sendable {
        var value: String
        var label: String
        var selected: Bool

        static func all(selected: SettingsChange.TokenHeader) -> [Self] {
            SettingsChange.TokenHeader.allCases.map { header in
                let label =
                    switch header {
                    case .usual: "as the protocol's clients do (X-ZUMO-AUTH over v2, Authorization: Bearer over v3)"
                    case .zumo: "X-ZUMO-AUTH (Mobile Apps)"
                    case .bearer: "Authorization: Bearer (a service secured the ASP.NET Core way)"
                    }
                return Self(value: header.rawValue, label: label, selected: header == selected)
            }
        }
    }

    func addRoutes(to router: inout Router) {
        router.get("/settings") { request in show(request, form: current()) }
        router.post("/settings") { request async throws in try await save(request) }
        router.post("/settings/tables") { request async throws in try await saveTables(request) }
    }

    /// The names typed into the Tables field (spaces or commas between them).
    static func tableNames(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    private func saveTables(_ request: Request) async throws -> Response {
        let text = try request.form()["tables"] ?? ""
        do {
            let change = try SettingsChange(
                [:], tables: Self.tableNames(text), hasEmbeddedService: environment.embeddedURL() != nil)
            try await change.apply(environment)
            environment.sessions.flash(
                request, .success,
                "Tables saved: \((change.tables ?? []).joined(separator: ", ")). Sync to fetch their rows.")
            return .redirect(to: "/settings#tables")
        } catch let invalid as SettingsChange.Invalid {
            return show(
                request, form: current(), status: .unprocessableContent,
                tables: SettingsPage.TablesForm(value: text, error: invalid.message))
        }
    }

    private func current() -> Form {
        let settings = environment.settings.settings
        return Form(
            remote: settings.remoteURL ?? "",
            key: settings.remoteURL == nil ? "" : environment.context.applicationKey ?? "",
            pageSize: String(settings.pageSize),
            pushWindow: String(settings.pushWindow ?? SyncConfiguration.defaultPushWindow),
            autoSync: settings.autoSyncInterval.map { String(Int($0)) } ?? "0",
            offline: environment.context.isOffline,
            tokenHint: environment.context.authTokenHint?.description,
            tokenHeaders: TokenHeaderChoice.all(selected: .init(environment.context.authStyleChoice)))
    }

    private func show(
        _ request: Request, form: Form, status: HTTPResponse.Status = .ok, switchQuestion: RemoteSwitchQuestion? = nil,
        tables: SettingsPage.TablesForm? = nil
    ) -> Response {
        environment.renderer.page(
            "settings", request, section: .settings, status: status,
            SettingsPage(
                form: form, embeddedURL: environment.embeddedURL(),
                policies: PoliciesView(context: environment.context),
                switchQuestion: switchQuestion,
                tables: tables
                    ?? SettingsPage.TablesForm(
                        value: ((try? environment.context.syncedTables()) ?? []).joined(separator: " ")),
                syncState: SyncStateView(context: environment.context),
                access: environment.access.map { access in
                    let open = access.openSessions
                    return SettingsPage.AccessView(
                        role: request.accessRole?.rawValue ?? "", openSessions: open, oneSession: open == 1)
                }))
    }

    private func save(_ request: Request) async throws -> Response {
        let fields = try request.form()
        let saved = current()
        var form = Form(
            remote: (fields["remote"] ?? "").trimmingCharacters(in: .whitespaces), key: fields["key"] ?? "",
            pageSize: fields["pageSize"] ?? saved.pageSize, pushWindow: fields["pushWindow"] ?? saved.pushWindow,
            autoSync: fields["autoSync"] ?? saved.autoSync, offline: fields["offline"] == "true",
            tokenHint: saved.tokenHint,
            tokenHeaders: TokenHeaderChoice.all(
                selected: fields["authStyle"].flatMap(SettingsChange.TokenHeader.init(rawValue:))
                    ?? .init(environment.context.authStyleChoice)))
        let given: [SettingsChange.Setting: String?] = [
            .remote: form.remote, .applicationKey: form.key, .pageSize: form.pageSize, .pushWindow: form.pushWindow,
            .autoSyncInterval: form.autoSync, .offline: String(form.offline), .authToken: fields["authToken"],
            .authStyle: fields["authStyle"],
            .signOut: String(fields["signOut"] == "true"), .onSwitch: fields["onSwitch"],
        ]
        let change: SettingsChange
        do {
            change = try SettingsChange(
                given.compactMapValues { $0 }, hasEmbeddedService: environment.embeddedURL() != nil)
        } catch {
            // The switch's choice, the sign-out and the token's header come from buttons and a list, not
            // from fields to correct.
            if let message = error[.onSwitch] ?? error[.signOut] ?? error[.authStyle] {
                throw HTTPError(.unprocessableContent, message)
            }
            form.remoteError = error[.remote]
            form.keyError = error[.applicationKey]
            form.tokenError = error[.authToken]
            form.pageSizeError = error[.pageSize]
            form.pushWindowError = error[.pushWindow]
            form.autoSyncError = error[.autoSyncInterval]
            return show(request, form: form, status: .unprocessableContent)
        }
        let remoteChange: RemoteChange?
        do {
            remoteChange = try await change.apply(environment)
        } catch SyncError.remoteSwitchRefused(let refusal) {
            // Nothing is saved until the user has chosen.
            return show(
                request, form: form, status: .conflict,
                switchQuestion: RemoteSwitchQuestion(refusal, signOut: change.signOut))
        }
        var message = "Settings saved."
        if case .switched(let report)? = remoteChange { message += " " + report.summary }
        if form.offline { message += " Offline mode is on: edits are kept here until you turn it off." }
        environment.sessions.flash(request, .success, message)
        return .redirect(to: "/settings")
    }
}
