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
    /// How many entries the journal holds (all filters aside), and how many it keeps.
    var total: Int
    var retention: Int
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
        /// The todo's text (from the result, else the client, server or base copy), else its id.
        var title: String
        var versionBefore: String
        var versionAfter: String
        var fields: [Field]
        /// Whether the Overturn button is offered, and if not, why.
        var overturnable: Bool
        var overturnNote: String?
        var batch: String?
        var overturns: String?
    }

    /// One field with its four values side by side.
    struct Field: Encodable, Sendable {
        var name: String
        var base: String
        var client: String
        var server: String
        var result: String
        /// Whether client and server differed.
        var differs: Bool
    }
}

extension JournalView.Entry {
    /// The entry as the page shows it; `blocked` when the item has a newer local change.
    init(_ entry: JournalEntry, columns: [String], blocked: Bool) {
        id = entry.id
        when = TodoPresenter.date(entry.recordedAt)
        decision = entry.decision.rawValue
        decisionLabel = entry.decision.label
        decidedBy = entry.decidedBy.label
        operation = entry.operation.rawValue
        table = entry.table
        itemId = entry.itemId
        title = TodoPresenter.label(entry.result ?? entry.client ?? entry.server ?? entry.base, id: entry.itemId)
        versionBefore = entry.versionBefore ?? "—"
        versionAfter = entry.versionAfter ?? "deleted"
        let names = ThreeWayMerge.fields(
            base: entry.base, client: entry.client, server: entry.server, columns: columns
        ).map(\.name)
        fields = names.map { name in
            JournalView.Field(
                name: name, base: Self.show(entry.base, name), client: Self.show(entry.client, name),
                server: Self.show(entry.server, name), result: Self.show(entry.result, name),
                differs: !ThreeWayMerge.same(entry.client?[name], entry.server?[name]))
        }
        if blocked {
            overturnable = false
            overturnNote = "The todo has a newer local change: push or discard it before overturning."
        } else if entry.result == nil && entry.losingValues == nil {
            overturnable = false
            overturnNote = "Both sides deleted the todo: there is nothing to bring back."
        } else {
            overturnable = true
            overturnNote = nil
        }
        batch = entry.batch
        overturns = entry.overturns
    }

    private static func show(_ item: Item?, _ name: String) -> String {
        guard let item else { return "(deleted)" }
        return TodoPresenter.display(item[name], column: name)
    }
}
