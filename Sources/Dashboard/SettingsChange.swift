import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// A change to the dashboard's settings, read and checked in one place for the Settings page's forms
/// and `POST /api/settings`: each setting given is parsed once, each mistake is a 422 with one
/// message, and ``apply(_:)`` makes the change. A setting that is not given stays as it is.
struct SettingsChange: Sendable {
    /// A setting, named as `/api/settings` names it.
    enum Setting: String, Sendable, CaseIterable {
        case remote, applicationKey, authToken, authStyle, signOut, onSwitch, pageSize, pushWindow, autoSyncInterval
        case offline, tables, `protocol`
    }

    /// How the sign-in token is sent: as the protocol's own clients send it (`X-ZUMO-AUTH` over v2,
    /// `Authorization: Bearer` over v3), or in one header always.
    enum TokenHeader: String, Sendable, CaseIterable {
        case usual = "auto", zumo, bearer

        /// The style saved for it (nil: the protocol's usual one).
        var style: AuthStyle? { AuthStyle(rawValue: rawValue) }

        /// The choice a saved style (nil: none) stands for.
        init(_ style: AuthStyle?) { self = style.flatMap { Self(rawValue: $0.rawValue) } ?? .usual }
    }

    /// Where the store syncs: the embedded service or an address.
    enum Remote: Sendable, Equatable {
        case embedded
        case address(RemoteAddress)
    }

    /// What was wrong with the settings given: each setting's message, in ``Setting`` order.
    struct Invalid: Error, Sendable {
        var mistakes: [(setting: Setting, message: String)]

        /// The message about `setting`, if it was wrong.
        subscript(_ setting: Setting) -> String? { mistakes.first { $0.setting == setting }?.message }

        /// Every message, as one answer.
        var message: String { mistakes.map(\.message).joined(separator: " ") }
    }

    /// nil: the remote stays as it is; then the application key is not read either.
    var remote: Remote?
    /// Sent to `remote`; nil for none.
    var applicationKey: String?
    /// A new sign-in token (nil: keep the saved one).
    var authToken: String?
    /// How the token is sent from now on (nil: as it is).
    var authStyle: TokenHeader?
    /// Remove the saved sign-in token.
    var signOut = false
    /// What becomes of queued changes when `remote` is another service.
    var onSwitch: RemoteSwitchChoice?
    var pageSize: Int?
    var pushWindow: Int?
    /// Seconds between automatic syncs; 0 turns auto-sync off.
    var autoSyncInterval: Int?
    var offline: Bool?
    var tables: [String]?
    var tableProtocol: ProtocolChoice?

    /// Reads the settings given as text (a form's fields, or a JSON body's values written as text).
    ///
    /// - Parameters:
    ///   - tables: the Tables setting's names (a form splits its text at spaces and commas).
    ///   - hasEmbeddedService: whether an empty `remote` can name the embedded service.
    init(_ given: [Setting: String], tables: [String]? = nil, hasEmbeddedService: Bool) throws(Invalid) {
        var mistakes: [Setting: String] = [:]
        func read<T>(_ setting: Setting, _ parse: (String) -> T?, _ message: String) -> T? {
            guard let text = given[setting] else { return nil }
            if let value = parse(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return value }
            mistakes[setting] = message
            return nil
        }
        if let text = given[.remote]?.trimmingCharacters(in: .whitespaces) {
            if text.isEmpty {
                remote = .embedded
                if !hasEmbeddedService {
                    mistakes[.remote] = "Give the table service's address, such as http://127.0.0.1:8090."
                }
            } else {
                do { remote = .address(try RemoteAddress(text)) } catch { mistakes[.remote] = error.description }
            }
        }
        // A key and a token travel in headers: one line, no control characters.
        applicationKey = read(
            .applicationKey, { $0.count <= 256 && !Self.hasControlCharacters($0, orSpace: false) ? $0 : nil },
            "The key must be one line of at most 256 characters, without control characters.")
        if applicationKey?.isEmpty == true { applicationKey = nil }
        authToken = read(
            .authToken, { $0.count <= 8192 && !Self.hasControlCharacters($0, orSpace: true) ? $0 : nil },
            "The token must be one line of at most 8192 characters, without spaces.")
        if authToken?.isEmpty == true { authToken = nil }
        authStyle = read(.authStyle, TokenHeader.init(rawValue:), #"authStyle must be "auto", "zumo" or "bearer"."#)
        signOut = read(.signOut, Self.flag, "signOut must be true or false.") ?? false
        onSwitch = read(
            .onSwitch, { $0.isEmpty ? nil : RemoteSwitchChoice(rawValue: $0) },
            #"onSwitch must be "push" or "discard"."#)
        if given[.onSwitch]?.isEmpty == true { mistakes[.onSwitch] = nil }
        let pageSizes = DashboardConfiguration.pageSizeRange
        pageSize = read(
            .pageSize, { Int($0).flatMap { pageSizes.contains($0) ? $0 : nil } },
            "The pull page size must be a whole number from \(pageSizes.lowerBound) to \(pageSizes.upperBound).")
        pushWindow = read(
            .pushWindow, { Int($0).flatMap { SyncConfiguration.clampedPushWindow($0) == $0 ? $0 : nil } },
            "The push window must be a whole number from 1 to \(SyncConfiguration.maximumPushWindow).")
        autoSyncInterval = read(
            .autoSyncInterval,
            { text in
                if text.isEmpty { return 0 }
                return Int(text).flatMap { $0 == 0 || DashboardConfiguration.autoSyncRange.contains($0) ? $0 : nil }
            }, "Use a whole number of seconds from 5 to 86400, or 0 to turn auto-sync off.")
        offline = read(.offline, Self.flag, "offline must be true or false.")
        tableProtocol = read(.protocol, ProtocolChoice.init(rawValue:), #"protocol must be "auto", "v2" or "v3"."#)
        if let tables {
            do {
                for name in tables { try TableDescription.checkName(name) }
                if tables.isEmpty { mistakes[.tables] = "Name at least one table, such as todoitem." }
            } catch {
                mistakes[.tables] = error.description
            }
            self.tables = tables
        }
        guard mistakes.isEmpty else {
            throw Invalid(mistakes: Setting.allCases.compactMap { setting in mistakes[setting].map { (setting, $0) } })
        }
    }

    private static func flag(_ text: String) -> Bool? { ["true": true, "false": false][text] }

    private static func hasControlCharacters(_ text: String, orSpace: Bool) -> Bool {
        text.unicodeScalars.contains { $0.value < (orSpace ? 0x21 : 0x20) || $0.value == 0x7F }
    }

    /// Makes the change. The remote comes first: when its switch is refused
    /// (``SyncError/remoteSwitchRefused(_:)``), nothing else is saved.
    ///
    /// - Returns: what pointing the store at `remote` did; nil when `remote` was not given.
    @discardableResult
    func apply(_ environment: DashboardEnvironment) async throws -> RemoteChange? {
        let context = environment.context
        var change: RemoteChange?
        if let remote {
            var url: URL?
            if case .address(let address) = remote { url = address.url }
            change = try await RemoteSetting(
                context: context, settings: environment.settings, embeddedURL: environment.embeddedURL,
                embeddedKey: environment.embeddedKey
            ).apply(remote: url, applicationKey: applicationKey, onSwitch: onSwitch)
        }
        if let tables { try await context.setSyncedTables(tables) }
        var saved = environment.settings.settings
        saved.pageSize = pageSize ?? saved.pageSize
        saved.pushWindow = pushWindow ?? saved.pushWindow
        saved.tableProtocol = tableProtocol ?? saved.tableProtocol
        if let autoSyncInterval { saved.autoSyncInterval = autoSyncInterval == 0 ? nil : Double(autoSyncInterval) }
        if saved != environment.settings.settings { try environment.settings.save(saved) }
        if let pushWindow { await context.setPushWindow(pushWindow) }
        if autoSyncInterval != nil { environment.autoSync?.setInterval(saved.autoSyncInterval) }
        if let tableProtocol { try await context.setTableProtocol(tableProtocol) }
        let restyled = authStyle.map { $0 != TokenHeader(context.authStyleChoice) } ?? false
        if restyled { try await context.setAuthStyle(authStyle?.style) }
        if signOut {
            try await context.setAuthToken(nil)
        } else if let authToken {
            try await context.setAuthToken(authToken)
        }
        if let offline { try await context.setOffline(offline) }
        // Back online, or another token or header: auto-sync looks again now rather than at its next tick.
        if offline != nil || signOut || authToken != nil || restyled { environment.autoSync?.nudge() }
        return change
    }
}
