import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// The decision part of a conflict page: the buttons for a delete against an edit (said plainly),
/// or the per-field pick with its preview.
struct ConflictDecisionView: Encodable, Sendable {
    var id: Int64
    /// The service deleted what was edited here: "Restore it with your values" / "Accept the delete".
    var serverDeleted: Bool
    /// It was deleted here and edited on the service: "Delete it anyway" / "Keep the server's version".
    var clientDeleted: Bool
    /// Both copies exist: the per-field pick is offered.
    var canPick: Bool
    /// One row per user field, with the side chosen for it.
    var picks: [PickField]
    /// Whether the page shows a preview the person asked for.
    var previewing: Bool
    /// What the merge policy would do, in words.
    var mergeNote: String

    /// One field of the per-field pick.
    struct PickField: Encodable, Sendable {
        var name: String
        /// The field was changed on both sides to different values: it needs a choice.
        var collides: Bool
        /// How the field changed, in words ("changed here only").
        var change: String
        var options: [PickOption]
        /// The value the pick gives.
        var preview: String
        /// The chosen side (client, server or base).
        var chosen: String
    }

    /// One side offered for a field.
    struct PickOption: Encodable, Sendable {
        var side: String
        var label: String
        var value: String
        var checked: Bool
    }
}

extension ConflictDecisionView {
    /// The decision part for `conflict`, with the sides chosen in `picks` (collisions default to the client's).
    init(_ conflict: SyncConflict, context: SyncContext, picks: [String: ConflictSide], previewing: Bool) {
        id = conflict.id
        serverDeleted = conflict.deletedOnServer
        clientDeleted = conflict.operation.kind == .delete && conflict.serverItem != nil
        canPick = conflict.clientItem != nil && conflict.serverItem != nil
        self.previewing = previewing
        let fields = context.conflicts.fieldMerges(of: conflict)
        let table = context.tables.first { $0.name == conflict.operation.table }
        self.picks =
            canPick
            ? fields.map { field in
                let chosen =
                    picks[field.name]
                    ?? ([.collision, .client].contains(field.change) ? .client : .server)
                return PickField(
                    name: field.name, collides: field.change == .collision, change: Self.words(field.change),
                    options: ConflictSide.allCases.map { side in
                        PickOption(
                            side: side.rawValue, label: Self.label(side),
                            value: Display.display(
                                field.value(side), column: field.name, type: table?.columnType(field.name)),
                            checked: side == chosen)
                    },
                    preview: Display.display(
                        field.value(chosen), column: field.name, type: table?.columnType(field.name)),
                    chosen: chosen.rawValue)
            } : []
        let noun = TablePreset.of(conflict.operation.table).noun
        mergeNote =
            switch context.conflicts.merge(of: conflict) {
            case .collision(let fields):
                "Changed on both sides to different values: \(fields.map(\.name).joined(separator: ", ")). Fields changed on one side only merge by themselves."
            case .merged: "No field collides: the merge policy would push your changes over the service's."
            case .serverHasEverything: "The service already holds every change made here."
            case .deleteStands: "The service changed nothing you can see: the delete can go on."
            case .serverDeletedClientEdited: "The service deleted this \(noun); you changed it here."
            case .clientDeletedServerEdited: "You deleted this \(noun) here; the service changed it."
            }
    }

    static func words(_ change: FieldChange) -> String {
        switch change {
        case .unchanged: "unchanged"
        case .client: "changed here only"
        case .server: "changed on the service only"
        case .same: "changed on both sides to the same value"
        case .collision: "changed on both sides"
        }
    }

    static func label(_ side: ConflictSide) -> String {
        switch side {
        case .client: "Yours"
        case .server: "Server's"
        case .base: "Base"
        }
    }

    /// `pick.text=client` query or form fields as picks; unknown sides are a clear 400.
    static func picks(_ fields: [(name: String, value: String)]) throws(HTTPError) -> [String: ConflictSide] {
        var picks: [String: ConflictSide] = [:]
        for (name, value) in fields where name.hasPrefix("pick.") {
            guard let side = ConflictSide(rawValue: value) else {
                throw HTTPError(.badRequest, "Choose client, server or base for \(name.dropFirst(5)), not “\(value)”.")
            }
            picks[String(name.dropFirst(5))] = side
        }
        return picks
    }
}
