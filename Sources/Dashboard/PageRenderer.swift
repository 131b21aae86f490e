import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import Views

/// Renders dashboard pages: the page's own context plus what the layout needs on every page
/// (CSRF token, header with remote state and counts, flash messages, current navigation item).
struct PageRenderer: Sendable {
    let templates: TemplateLibrary
    let csrfToken: String
    let sessions: Sessions
    /// Shown in the header and the window title ("Device A" in the demo).
    let deviceName: String?
    let header: @Sendable () -> HeaderState

    /// Sections of the navigation bar.
    enum Section: String { case todos, operations, conflicts, settings, none }

    func page(
        _ template: String, _ request: Request, section: Section, status: Int = 200, _ context: [String: Any]
    ) -> Response {
        var full = context
        full["csrf"] = csrfToken
        full["header"] = header().context
        full["nav"] = [section.rawValue: true]
        full["back"] = request.path
        full["device"] = deviceName
        let flashes = sessions.takeFlashes(request)
        if !flashes.isEmpty {
            full["flash"] = flashes.map { ["kind": $0.kind.rawValue, "message": $0.message] }
        }
        return templates.page(template, full, status: status)
    }

    /// The error page, with a status and advice.
    func error(_ request: Request, _ error: any HTTPResponseError) -> Response {
        page(
            "error", request, section: .none, status: error.status,
            [
                "status": error.status, "reason": HTTPStatus.reason(error.status), "message": error.message,
            ])
    }
}

/// What the header shows: remote, its state, counts, progress.
struct HeaderState: Sendable {
    var remote: String
    var remoteLabel: String
    var state: String
    var stateLabel: String
    var pending: Int
    var conflicts: Int
    var failed: Int
    var running: Bool
    var progress: String
    var servicePage: String?
    var lastResult: String?

    var context: [String: Any] {
        var context: [String: Any] = [
            "remote": remote, "remoteLabel": remoteLabel, "state": state, "stateLabel": stateLabel,
            "pending": pending, "conflicts": conflicts, "running": running, "progress": progress,
            "conflictsWord": conflicts == 1 ? "conflict" : "conflicts",
        ]
        context["servicePage"] = servicePage
        return context
    }

    /// The JSON of `/api/status`.
    var json: Item {
        [
            "remote": .string(remote), "state": .string(state), "stateLabel": .string(stateLabel),
            "pending": .number(Double(pending)), "conflicts": .number(Double(conflicts)),
            "failed": .number(Double(failed)), "running": .bool(running), "progressText": .string(progress),
            "conflictsWord": .string(conflicts == 1 ? "conflict" : "conflicts"),
            "lastResult": lastResult.map(JSONValue.string) ?? .null,
        ]
    }

    /// Reads counts and state; never waits for a running sync.
    static func read(context: SyncContext, sync: BackgroundSync, servicePage: String?) -> HeaderState {
        let status = try? context.status()
        let remote = context.remoteURL ?? ""
        let (state, label): (String, String)
        if context.isOffline {
            (state, label) = ("offline", "Offline mode")
        } else if remote.isEmpty {
            (state, label) = ("unknown", "No service set")
        } else if let last = context.lastSync {
            switch last.stopReason {
            case .unreachable?, .timedOut?: (state, label) = ("unreachable", "Unreachable")
            case .serverError?: (state, label) = ("unreachable", "Service failing")
            case .notAuthorized?: (state, label) = ("unreachable", "Not authorised")
            default: (state, label) = ("reachable", "Reachable")
            }
        } else {
            (state, label) = ("unknown", "Not synced yet")
        }
        let running = sync.isRunning
        let progress = context.progress
        let progressText: String
        switch progress.activity {
        case .idle: progressText = running ? "Starting…" : ""
        case .pushing: progressText = "Pushing \(progress.done)/\(progress.total ?? progress.done)…"
        case .pulling: progressText = "Pulling: \(progress.done) rows…"
        }
        return HeaderState(
            remote: remote, remoteLabel: Self.shortLabel(remote), state: state, stateLabel: label,
            pending: status?.pending ?? 0, conflicts: status?.conflicts ?? 0, failed: status?.failed ?? 0,
            running: running, progress: progressText, servicePage: servicePage,
            lastResult: sync.lastResult?.message)
    }

    /// `http://127.0.0.1:8090/` → `127.0.0.1:8090`.
    static func shortLabel(_ url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host else { return url }
        return parsed.port.map { "\(host):\($0)" } ?? host
    }
}
