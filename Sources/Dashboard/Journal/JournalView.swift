import Foundation
import SyncClient
import SyncProtocol

/// The `/journal` page's content: one page of conflict outcomes, newest first, with its filters.
struct JournalView: Encodable, Sendable {
    var entries: [Entry]
    var hasEntries: Bool
    /// The filters as typed, to show them back in the form.
    var decision: String?
    var item: String?
    var search: String?
    var batch: String?
    var decisions: [Option]
    /// How many entries the journal holds (all filters aside), and how many it keeps, written with
    /// thousands separators ("10,000").
    var total: String
    var retention: String
    /// The older page, when there is one; the newest page, when this is not it.
    var olderURL: String?
    var newestURL: String?
    /// The same filters as JSON Lines.
    var exportURL: String

    /// One choice of the decision filter.
    struct Option: Encodable, Sendable {
        var value: String
        var label: String
        var selected: Bool
    }

    /// One journal entry.
    struct Entry: Encodable, Sendable {
        var id: String
        var when: String
        var decision: String
        var decisionLabel: String
        var decidedBy: String
        var operation: String
        var table: String
        var itemId: String
        /// The item's history.
        var historyHref: String
        /// The todo's text (from the result, else the client, server or base copy), else its id.
        var title: String
        var versionBefore: String
        var versionAfter: String
        /// The four copies side by side.
        var comparison: FieldComparison
        /// Whether the Overturn button is offered, and if not, why.
        var overturnable: Bool
        var overturnNote: String?
        var batch: String?
        var overturns: String?
    }
}

extension JournalView.Entry {
    /// The entry as the page shows it; `blocked` when the item has a newer local change.
    init(_ entry: JournalEntry, description: TableDescription?, blocked: Bool) {
        id = entry.id
        when = Display.date(entry.recordedAt)
        decision = entry.decision.rawValue
        decisionLabel = entry.decision.label
        decidedBy = entry.decidedBy.label
        operation = entry.operation.rawValue
        table = entry.table
        itemId = entry.itemId
        historyHref = HistoryController.href(entry.table, entry.itemId)
        title = Display.title(
            entry.result ?? entry.client ?? entry.server ?? entry.base, table: entry.table, id: entry.itemId)
        versionBefore = entry.versionBefore ?? "—"
        versionAfter = entry.versionAfter ?? "deleted"
        let names = ThreeWayMerge.fields(
            base: entry.base, client: entry.client, server: entry.server, columns: description?.columnNames ?? []
        ).map(\.name)
        comparison = FieldComparison(
            fields: names, of: description,
            copies: [
                .init(side: .base, item: entry.base, heading: "Base"),
                .init(side: .client, item: entry.client, heading: "Client"),
                .init(side: .server, item: entry.server, heading: "Server"),
                .init(side: .result, item: entry.result, heading: "Result"),
            ])
        let noun = TablePreset.of(entry.table).noun
        if blocked {
            overturnable = false
            overturnNote = "The \(noun) has a newer local change: push or discard it before overturning."
        } else if entry.result == nil && entry.losingValues == nil {
            overturnable = false
            overturnNote = "Both sides deleted the \(noun): there is nothing to bring back."
        } else {
            overturnable = true
            overturnNote = nil
        }
        batch = entry.batch
        overturns = entry.overturns
    }
}
