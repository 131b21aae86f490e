import Foundation
import HTTPServer
import SyncClient

/// Hold, Release, Retry now and Discard of queued changes, one path for the queue page's buttons, its
/// bulk form and the JSON API: each operation is changed in its own transaction, and a Retry that
/// made anything ready starts a push in the background.
struct QueueActions: Sendable {
    let environment: DashboardEnvironment

    /// What an action did to the operations it was given.
    struct Report: Encodable, Sendable {
        var action: QueueAction
        var results: [QueueActionResult]
        /// Whether a push started for a Retry (false: one was running already, or none was needed).
        var pushStarted: Bool

        var done: Int { results.count { $0.outcome == .done } }
        var unchanged: Int { results.count { $0.outcome == .unchanged } }
        var refused: [QueueActionResult] { results.filter { $0.outcome == .refused } }
    }

    /// Applies `action` to `ids`; a reason goes with a hold.
    func perform(
        _ action: QueueAction, ids: [Int64], reason: String?, request: Request
    ) async throws(HTTPError) -> Report {
        guard !ids.isEmpty else {
            throw HTTPError(.unprocessableContent, "Select at least one change (tick its box) first.")
        }
        guard ids.count <= 1000 else {
            throw HTTPError(.unprocessableContent, "Select at most 1000 changes at once.")
        }
        let context = environment.context
        let results = try await storeCall { () async throws(SyncError) in
            try await context.operations.perform(action, on: ids, reason: reason)
        }
        var started = false
        if action == .retry, results.contains(where: { $0.outcome == .done }) {
            started = environment.sync.start(.push, session: request.attributes[Sessions.attribute])
        }
        return Report(action: action, results: results, pushStarted: started)
    }

    /// One sentence for the flash message after `report`.
    static func summary(_ report: Report) -> String {
        func changes(_ count: Int) -> String { "\(count) change\(count == 1 ? "" : "s")" }
        var parts: [String] = []
        if report.done > 0 {
            switch report.action {
            case .hold: parts.append("Held \(changes(report.done)): no push sends them until you release them")
            case .release: parts.append("Released \(changes(report.done)): the next push sends them")
            case .retry:
                parts.append(
                    "Retrying \(changes(report.done))"
                        + (report.pushStarted ? ": a push started" : " with the running push"))
            case .discard: parts.append("Discarded \(changes(report.done))")
            }
        }
        if report.unchanged > 0 {
            let what = report.action == .hold ? "held already" : "not held"
            parts.append("\(changes(report.unchanged)) \(report.unchanged == 1 ? "was" : "were") \(what)")
        }
        for refused in report.refused.prefix(3) { parts.append(refused.message ?? "#\(refused.id) was refused") }
        if report.refused.count > 3 { parts.append("\(report.refused.count - 3) more refused") }
        return parts.joined(separator: ". ") + "."
    }
}
