import Foundation
import SyncProtocol

/// The one sentence above a row's history, saying why the row is as it is now: a pure function of
/// the row's queued change (with its last error) and its events.
enum RowExplanation {
    /// What the store holds of the row now.
    struct Now {
        /// The local row (nil: none on this device).
        var row: Item?
        /// Its queued change, if any, and that change's last error.
        var operation: TableOperation?
        var error: OperationError?
        /// How many events the store keeps (said when none explains the row).
        var retention: Int
    }

    static func sentence(_ now: Now, events: [HistoryEvent]) -> String {
        if let operation = now.operation { return queued(operation, error: now.error, events: events) }
        // The last event that set the row's values, or removed it.
        for event in events.reversed() {
            if let sentence = settled(by: event, now: now) { return sentence }
        }
        return now.row == nil
            ? "This device has no row with this id, and no kept event names it."
            : "No kept event explains this row: it came before its history began (the store keeps the newest "
                + "\(now.retention) events)."
    }

    /// The row waits on its queued change.
    private static func queued(_ operation: TableOperation, error: OperationError?, events: [HistoryEvent]) -> String {
        let edit = events.last { $0.operationId == operation.id && $0.kind.isLocalEdit }
        let yours = edit.map { "Your \(what($0)) of \(time($0.recordedAt))" } ?? "Your \(operation.kind.rawValue)"
        if let hold = operation.hold {
            let reason = hold.reason.map { ", because: \($0)" } ?? ""
            return "\(yours) is held (since \(time(hold.since))\(reason)): it is not pushed until you release it."
        }
        switch operation.state {
        case .conflict:
            let status = error?.status.map { " (HTTP \($0))" } ?? ""
            if error?.kind == .deletedOnServer {
                return "\(yours) met a delete on the service\(status): it waits for your decision on the "
                    + "conflict page (Use Client, Use Server or Cancel)."
            }
            let version = error?.serverItem?[SystemColumn.version]?.stringValue.map { " (version \($0))" } ?? ""
            return "\(yours) met a newer copy on the service\(version)\(status): it waits for your decision on "
                + "the conflict page (Use Client, Use Server or Cancel)."
        case .failed:
            let status = error?.status.map { "HTTP \($0): " } ?? ""
            return "\(yours) was refused by the service (\(status)\(error?.message ?? "no reason given")): it "
                + "waits in the queue until you edit it, cancel the error or discard it."
        case .attempted:
            return "\(yours) was sent but no answer came: the next push finds out whether the service applied "
                + "it, and sends it again if not."
        case .inFlight:
            return "\(yours) is being sent to the service now."
        case .pending:
            let last = events.last { $0.operationId == operation.id }
            switch last?.kind {
            case .conflict?:
                return "The conflict of \(time(last?.recordedAt ?? operation.queuedAt)) was decided: "
                    + "\(operation.kind == .delete ? "the delete" : "your values") go to the service over its "
                    + "version at the next push."
            case .cancelled?:
                return "The conflict or refusal was set aside at \(time(last?.recordedAt ?? operation.queuedAt)): "
                    + "\(yours) waits in the queue and meets the service again at the next push."
            default:
                return "\(yours) waits in the queue: the service has not seen it yet."
            }
        }
    }

    /// The sentence of an event that left the row as it is, when `event` is one.
    private static func settled(by event: HistoryEvent, now: Now) -> String? {
        let at = time(event.recordedAt)
        switch event.kind {
        case .decided:
            guard let entry = event.journalEntry else {
                return "A conflict was decided at \(at); the journal no longer keeps how."
            }
            let version = entry.versionAfter.map { " as version \($0)" } ?? ""
            let outcome =
                switch entry.decision {
                case .useServer:
                    entry.result == nil ? "the service's delete was kept" : "the service's copy was kept\(version)"
                case .useClient:
                    entry.result == nil
                        ? "your delete went to the service" : "your values went to the service\(version)"
                case .merge: "the fields changed on each side were merged and the service holds them\(version)"
                case .pick: "the fields were picked one by one and the service holds them\(version)"
                case .overturn:
                    entry.result == nil
                        ? "the earlier outcome was overturned: the row was deleted"
                        : "the earlier outcome was overturned and the service holds the values that had lost\(version)"
                }
            return "\(entry.decision.label) by \(entry.decidedBy.label) at \(at): \(outcome)."
        case .pushed:
            if event.detail == OperationKind.delete.rawValue {
                return "You deleted it; the service applied the delete at \(at)."
            }
            let version = event.version.map { " as version \($0)" } ?? ""
            let what = event.detail == OperationKind.insert.rawValue ? "new row" : "edit"
            return "Your \(what) is on the service: it applied it at \(at)\(version)."
        case .pulled:
            return "The service's copy\(event.version.map { " (version \($0))" } ?? ""), brought by "
                + "\(page(event)) at \(at)."
        case .pulledDelete:
            return "The service deleted it: \(page(event)) at \(at) removed the local copy."
        case .discarded:
            return "Your change was discarded at \(at): the row went back to the last copy from the service."
        case .purged:
            return now.row == nil
                ? "Removed from this device by a purge at \(at); the service may still have it (pull to bring it back)."
                : nil
        case .remoteSwitched:
            return now.row == nil ? "Removed when this device switched to another service at \(at)." : nil
        case .localInsert, .localUpdate, .localDelete, .pushUnanswered, .pushRefused, .conflict, .cancelled,
            .pullSkipped, .tokenReset, .held, .released, .serviceRestored, .accessRevoked:
            return nil
        }
    }

    /// "edit (text, complete)", "new row", "delete".
    private static func what(_ event: HistoryEvent) -> String {
        let columns = (event.values ?? [:]).keys.sorted()
        let named = columns.isEmpty ? "" : " (" + columns.joined(separator: ", ") + ")"
        switch event.kind {
        case .localInsert: return "new row"
        case .localDelete: return "delete"
        default: return "edit" + named
        }
    }

    /// "page 2 of the pull (query id all)".
    private static func page(_ event: HistoryEvent) -> String {
        guard let page = event.pullPage else { return "a pull" }
        return "page \(page.page) of a pull" + (page.queryId.map { " (query id \($0))" } ?? "")
    }

    /// `2026-11-26 18:02:03 UTC`.
    static func time(_ date: Date) -> String {
        let stamp = Timestamp.string(date)  // 2026-11-26T18:02:03.000Z
        return stamp.prefix(10) + " " + stamp.dropFirst(11).prefix(8) + " UTC"
    }
}

extension HistoryEvent.Kind {
    /// A local insert, edit or delete.
    var isLocalEdit: Bool { self == .localInsert || self == .localUpdate || self == .localDelete }
}
