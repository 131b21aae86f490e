import Foundation
import SyncClient

/// The `/verify` page's content: the last verify's reports, silent divergences first in each.
struct VerifyView: Encodable, Sendable {
    /// A verify is running now (the page reloads itself and offers Cancel).
    var running: Bool
    /// Other work runs: Verify now waits for it.
    var busy: Bool
    var hasOutcome: Bool
    var stopped: String?
    var tables: [Table]

    struct Table: Encodable, Sendable {
        var name: String
        var summary: String
        /// `ok`, `info` or `warning`: how the summary is marked.
        var tone: String
        var rows: [Row]
        var hasRows: Bool
        /// "and 1,200 more (see /api/verify)" when the list is cut.
        var more: String?
    }

    struct Row: Encodable, Sendable {
        var id: String
        var historyURL: String
        var kind: String
        var reason: String
        var silent: Bool
        var localVersion: String
        var serviceVersion: String
    }

    init(outcome: VerifyOutcome?, running: Bool, busy: Bool, shownPerTable: Int) {
        self.running = running
        self.busy = busy
        hasOutcome = outcome != nil
        stopped = outcome?.stopped
        tables = (outcome?.reports ?? []).map { report in
            let rows = report.differences.prefix(shownPerTable).map { difference in
                Row(
                    id: difference.id, historyURL: HistoryController.href(report.table, difference.id),
                    kind: difference.kind.rawValue.replacingOccurrences(of: "-", with: " ")
                        + (difference.columns.isEmpty ? "" : ": " + difference.columns.joined(separator: ", ")),
                    reason: difference.reason.label, silent: difference.reason == .none,
                    localVersion: difference.localVersion ?? "—", serviceVersion: difference.serviceVersion ?? "—")
            }
            let hidden = report.differences.count - rows.count
            return Table(
                name: report.table, summary: report.summary,
                tone: report.differences.isEmpty ? "ok" : report.silentDivergences.isEmpty ? "info" : "warning",
                rows: Array(rows), hasRows: !rows.isEmpty,
                more: hidden > 0 ? "and \(hidden.formatted()) more (all of them are in /api/verify)" : nil)
        }
    }
}
