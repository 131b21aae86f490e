import Foundation
import HTTPServer
import SyncClient
import Views

/// What every controller uses: the sync context, the renderer, sessions and background sync.
struct DashboardEnvironment: Sendable {
    let context: SyncContext
    let renderer: PageRenderer
    let sessions: Sessions
    let sync: BackgroundSync
    /// Syncs by itself (nil in an opened support bundle, which never syncs).
    let autoSync: AutoSync?
    let settings: SettingsFile
    /// Every list's rendered rows, by what they show.
    let listRows: FragmentCache<ListRow>
    /// Keeps open pages in step with the store.
    let live: LiveUpdates
    /// The embedded service's address, when the dashboard has one.
    let embeddedURL: @Sendable () -> String?
    /// Who may use the dashboard, when it asks who you are (bound off loopback).
    let access: SignInSessions?
    /// The key the dashboard's own sync client shows its embedded service past ``AccessGate``.
    var embeddedKey: String? { access?.embeddedKey }

    static let table = BackgroundSync.table

    /// "3 changes pending" (or "nothing pending").
    func pendingSummary() -> String {
        let pending = (try? context.status().pending) ?? 0
        return pending == 0 ? "nothing pending" : "\(pending) change\(pending == 1 ? "" : "s") pending"
    }

    /// A local path to go back to after a form, or `fallback` (never another site).
    static func safeBack(_ value: String?, fallback: String = "/") -> String {
        guard let value, value.hasPrefix("/"), !value.hasPrefix("//"), !value.contains("\\") else { return fallback }
        return value
    }
}

extension SyncError {
    /// The HTTP answer for a sync error met while handling a page or API request.
    var httpError: HTTPError {
        switch self {
        case .itemNotFound, .operationNotFound, .unknownTable:
            HTTPError(.notFound, description)
        case .itemExists, .changeNotAllowed, .notInConflict, .operationInFlight, .pendingOperations,
            .remoteSwitchRefused, .operationHeld, .operationInConflict, .operationWaitsBehind, .readOnly:
            HTTPError(.conflict, description)
        case .invalidItem, .invalidTableName, .invalidHoldReason:
            HTTPError(.unprocessableContent, description)
        case .stopped, .noRemote, .serviceWentBack:
            HTTPError(.serviceUnavailable, description)
        case .badResponse, .serviceFault, .serviceHasNoTable:
            HTTPError(.badGateway, description)
        case .storage:
            HTTPError(.internalServerError, description)
        }
    }
}

extension ConflictDecisionError {
    /// The HTTP answer for a pick, an overturn or a bulk decision that cannot be carried out.
    var httpError: HTTPError {
        switch self {
        case .entryNotFound, .batchNotFound: HTTPError(.notFound, description)
        case .newerLocalChange, .nothingToOverturn: HTTPError(.conflict, description)
        case .pickNeedsBothCopies, .pick, .bulkNeedsUseClientOrServer: HTTPError(.unprocessableContent, description)
        }
    }
}

/// Runs a store call, turning its error into the matching HTTP error.
func storeCall<T>(_ body: () throws(SyncError) -> T) throws(HTTPError) -> T {
    do { return try body() } catch { throw error.httpError }
}

/// Runs a store call that writes (it awaits the disk), turning its error into the matching HTTP error.
func storeCall<T>(_ body: () async throws(SyncError) -> T) async throws(HTTPError) -> T {
    do { return try await body() } catch { throw error.httpError }
}
