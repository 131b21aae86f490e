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
        var remoteError: String?
        var keyError: String?
        var pageSizeError: String?
        var pushWindowError: String?
        var autoSyncError: String?
        var tokenError: String?
    }

    /// The interval typed: nil for off (empty or 0), else seconds in ``autoSyncRange``; throws the
    /// message to show when it is neither.
    static func autoSyncInterval(_ text: String) -> Result<Double?, AutoSyncIntervalError> {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.isEmpty || text == "0" { return .success(nil) }
        guard let seconds = Int(text), DashboardConfiguration.autoSyncRange.contains(seconds) else {
            return .failure(.init())
        }
        return .success(Double(seconds))
    }

    struct AutoSyncIntervalError: Error {
        var message = "Use a whole number of seconds from 5 to 86400, or 0 to turn auto-sync off."
    }

    func addRoutes(to router: inout Router) {
        router.get("/settings") { request in show(request, form: current()) }
        router.post("/settings") { request async throws in try await save(request) }
        router.post("/settings/tables") { request in try saveTables(request) }
    }

    /// The names typed into the Tables field (spaces or commas between them).
    static func tableNames(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    private func saveTables(_ request: Request) throws -> Response {
        let text = try request.form()["tables"] ?? ""
        let context = environment.context
        do {
            let saved = try context.setSyncedTables(Self.tableNames(text))
            environment.sessions.flash(
                request, .success, "Tables saved: \(saved.joined(separator: ", ")). Sync to fetch their rows.")
            return .redirect(to: "/settings#tables")
        } catch {
            let message =
                switch error {
                case .invalidItem: "Name at least one table, such as todoitem."
                default: error.description
                }
            return show(
                request, form: current(), status: .unprocessableContent,
                tables: SettingsPage.TablesForm(value: text, error: message))
        }
    }

    private func current() -> Form {
        let settings = environment.settings.settings
        return Form(
            remote: settings.remoteURL ?? "", key: settings.applicationKey ?? "",
            pageSize: String(settings.pageSize),
            pushWindow: String(settings.pushWindow ?? SyncConfiguration.defaultPushWindow),
            autoSync: settings.autoSyncInterval.map { String(Int($0)) } ?? "0",
            offline: environment.context.isOffline,
            tokenHint: environment.context.authTokenHint?.description)
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
                syncState: SyncStateView(context: environment.context)))
    }

    private func save(_ request: Request) async throws -> Response {
        let fields = try request.form()
        var form = Form(
            remote: (fields["remote"] ?? "").trimmingCharacters(in: .whitespaces),
            key: fields["key"] ?? "", pageSize: (fields["pageSize"] ?? "50").trimmingCharacters(in: .whitespaces),
            pushWindow: (fields["pushWindow"] ?? String(environment.settings.settings.pushWindow ?? 16))
                .trimmingCharacters(in: .whitespaces),
            autoSync: (fields["autoSync"] ?? environment.settings.settings.autoSyncInterval.map { String(Int($0)) }
                ?? "0")
                .trimmingCharacters(in: .whitespaces),
            offline: fields["offline"] == "true", tokenHint: environment.context.authTokenHint?.description)
        // An empty field keeps the saved token; "sign out" removes it.
        let token = (fields["authToken"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let signOut = fields["signOut"] == "true"
        // Sent by the forms of the question asked when the address names another service.
        var onSwitch: RemoteSwitchChoice?
        if let choice = fields["onSwitch"], !choice.isEmpty {
            guard let parsed = RemoteSwitchChoice(rawValue: choice) else {
                throw HTTPError(.badRequest, "onSwitch must be “push” or “discard”.")
            }
            onSwitch = parsed
        }
        var url: URL?
        if form.remote.isEmpty {
            if environment.embeddedURL() == nil {
                form.remoteError = "Give the table service's address, such as http://127.0.0.1:8090."
            }
        } else if let parsed = URL(string: form.remote), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host?.isEmpty == false
        {
            url = parsed
        } else {
            form.remoteError = "“\(form.remote)” is not a web address; write it like http://127.0.0.1:8090."
        }
        // A key travels in a header: it cannot hold line breaks or other control characters.
        if form.key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) || form.key.count > 256 {
            form.keyError = "The key must be one line of at most 256 characters, without control characters."
        }
        if token.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) || token.count > 8192 {
            form.tokenError = "The token must be one line of at most 8192 characters, without spaces."
        }
        let pageSize = Int(form.pageSize)
        if pageSize == nil || !(1...1000).contains(pageSize!) {
            form.pageSizeError = "Use a whole number from 1 to 1000."
        }
        let pushWindow = Int(form.pushWindow).flatMap { SyncConfiguration.clampedPushWindow($0) == $0 ? $0 : nil }
        if pushWindow == nil {
            form.pushWindowError = "Use a whole number from 1 to \(SyncConfiguration.maximumPushWindow)."
        }
        var autoSyncInterval: Double?
        switch Self.autoSyncInterval(form.autoSync) {
        case .success(let interval): autoSyncInterval = interval
        case .failure(let error): form.autoSyncError = error.message
        }
        if form.remoteError != nil || form.keyError != nil || form.pageSizeError != nil || form.pushWindowError != nil
            || form.tokenError != nil || form.autoSyncError != nil
        {
            return show(request, form: form, status: .unprocessableContent)
        }
        let change: RemoteChange
        do {
            change = try await RemoteSetting(
                context: environment.context, settings: environment.settings, embeddedURL: environment.embeddedURL
            ).apply(remote: url, applicationKey: form.key.isEmpty ? nil : form.key, onSwitch: onSwitch)
        } catch SyncError.remoteSwitchRefused(let refusal) {
            // Nothing is saved until the user has chosen.
            return show(
                request, form: form, status: .conflict, switchQuestion: RemoteSwitchQuestion(refusal, signOut: signOut))
        }
        var settings = environment.settings.settings
        settings.pageSize = pageSize!
        settings.pushWindow = pushWindow!
        settings.autoSyncInterval = autoSyncInterval
        try environment.settings.save(settings)
        environment.autoSync?.setInterval(autoSyncInterval)
        await environment.context.setPushWindow(pushWindow!)
        if signOut {
            try await environment.context.setAuthToken(nil)
        } else if !token.isEmpty {
            try await environment.context.setAuthToken(token)
        }
        try environment.context.setOffline(form.offline)
        // Back online, or another token: auto-sync looks again now rather than at its next tick.
        environment.autoSync?.nudge()
        var message = "Settings saved."
        if case .switched(let report) = change { message += " " + report.summary }
        if form.offline { message += " Offline mode is on: edits are kept here until you turn it off." }
        environment.sessions.flash(request, .success, message)
        return .redirect(to: "/settings")
    }
}
