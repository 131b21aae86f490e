import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// The history page's content: the sentence, then the events oldest first, each with what it did
/// and links to where it is told in full (the queue, the journal, the log).
struct HistoryView: Encodable, Sendable {
    var table: String
    var itemId: String
    var explanation: String
    /// Where the row is edited (nil: this device holds no row).
    var rowURL: String?
    /// The row's queued change, linked on the queue page.
    var operationURL: String?
    var conflictURL: String?
    /// The exchanges with the service about the row, on the log page.
    var logURL: String
    var events: [Event]
    var hasEvents: Bool

    struct Event: Encodable, Sendable {
        var sequence: Int64
        var when: String
        var title: String
        var summary: String
        /// `local`, `ok`, `refused`, `conflict`, `decided`, `pull`, `table`: how the event is marked.
        var tone: String
        var journalURL: String?
    }

    init(_ history: ItemHistory) {
        table = history.table
        itemId = history.itemId
        explanation = history.explanation
        if history.row != nil {
            rowURL = TablePreset.href(history.table, history.itemId)
        }
        if let operation = history.operation {
            operationURL = "/operations#op-\(operation.id)"
            if operation.state == .conflict { conflictURL = "/conflicts/\(operation.id)" }
        }
        logURL = "/log" + JournalController.queryString([("table", history.table), ("item", history.itemId)])
        events = history.events.map { event in
            Event(
                sequence: event.sequence, when: Display.date(event.recordedAt), title: event.title,
                summary: event.summary, tone: Self.tone(event.kind),
                journalURL: event.journalEntry.map { "/journal" + JournalController.queryString([("item", $0.itemId)]) }
            )
        }
        hasEvents = !events.isEmpty
    }

    private static func tone(_ kind: HistoryEvent.Kind) -> String {
        switch kind {
        case .localInsert, .localUpdate, .localDelete, .cancelled, .discarded, .held, .released: "local"
        case .pushed: "ok"
        case .pushUnanswered, .pushRefused: "refused"
        case .conflict: "conflict"
        case .decided: "decided"
        case .pulled, .pulledDelete, .pullSkipped: "pull"
        case .purged, .tokenReset, .remoteSwitched, .serviceRestored, .accessRevoked: "table"
        }
    }
}
