import SyncProtocol

extension HistoryEvent {
    /// A short name for the event: "Local edit", "Pushed", "Pulled"...
    public var title: String {
        switch kind {
        case .localInsert: "Local insert"
        case .localUpdate: "Local edit"
        case .localDelete: "Local delete"
        case .pushed: "Pushed"
        case .pushUnanswered: "Sent, no answer"
        case .pushRefused: "Refused by the service"
        case .conflict: "Conflict"
        case .decided: journalEntry.map { "Decided: \($0.decision.label)" } ?? "Decided"
        case .cancelled: "Set aside"
        case .discarded: "Discarded"
        case .held: "Held"
        case .released: "Released"
        case .pulled: "Pulled"
        case .pulledDelete: "Deleted by a pull"
        case .pullSkipped: "Pulled, left alone"
        case .purged: "Purged"
        case .tokenReset: "Delta token reset"
        case .remoteSwitched: "Remote switched"
        case .serviceRestored: "Service restored"
        case .accessRevoked: "Access revoked"
        }
    }

    /// What the event did, in a line: the values an edit set, the versions of a push, the page and
    /// tokens of a pull...
    public var summary: String {
        let operation = operationId.map { "operation \($0)" }
        let status = self.status.map { "HTTP \($0)" }
        switch kind {
        case .localInsert, .localUpdate, .localDelete:
            let values = (values ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.jsonText)" }
            return Self.joined([values.isEmpty ? nil : values.joined(separator: ", "), operation, detail])
        case .pushed:
            let versions = [previousVersion.map { "sent against version \($0)" }, version.map { "now version \($0)" }]
            return Self.joined(
                [detail.map { "the \($0) was applied" } ?? "applied", operation] + versions)
        case .pushUnanswered, .pushRefused:
            return Self.joined([status, detail, operation])
        case .conflict:
            return Self.joined([
                status, detail, version.map { "the service has version \($0)" } ?? "the service deleted it", operation,
            ])
        case .decided:
            guard let entry = journalEntry else { return "The journal no longer keeps this entry." }
            return Self.joined([
                "by \(entry.decidedBy.label)", entry.versionBefore.map { "over version \($0)" },
                entry.versionAfter.map { "now version \($0)" } ?? (entry.result == nil ? "deleted" : nil),
            ])
        case .cancelled, .discarded:
            return Self.joined([operation])
        case .held, .released:
            return Self.joined([detail, operation])
        case .pulled, .pulledDelete, .pullSkipped:
            let page = pullPage.map { page in
                "page \(page.page) of a pull" + (page.queryId.map { " (query id \($0))" } ?? "")
            }
            let tokens = pullPage.flatMap { page -> String? in
                guard page.queryId != nil else { return nil }
                return "token \(page.tokenBefore ?? "(none)") → \(page.tokenAfter ?? "(none)")"
            }
            let skipped = kind == .pullSkipped ? "kept the local row: a change of it was queued" : nil
            return Self.joined([version.map { "version \($0)" }, page, tokens, skipped])
        case .purged, .tokenReset, .remoteSwitched, .serviceRestored, .accessRevoked:
            return detail ?? ""
        }
    }

    private static func joined(_ parts: [String?]) -> String {
        parts.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
