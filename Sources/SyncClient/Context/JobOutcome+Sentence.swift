import Foundation

extension JobOutcome {
    /// What the job came to, in one sentence: the one wording the CLI prints and the dashboard
    /// shows. "Pushed 2 changes, 1 conflict to resolve.", "Pushed 1 change; pulled 30 rows from 2
    /// tables.", "Verified todoitem: this copy matches the service."
    public var sentence: String {
        switch self {
        case .pushed(let result):
            Self.sentence([result.summary])
        case .pulled(let result):
            Self.sentence([result.pushed?.summary, result.summary].compactMap { $0 })
        case .synced(let result):
            Self.sentence(Self.parts(of: result))
        case .verified(let reports, let stopped):
            stopped?.description ?? Self.sentence(verified: reports)
        case .decided(let outcome):
            Self.sentence(decided: outcome)
        }
    }

    /// Parts of a sentence, joined by semicolons: the first as it is, the others from a small
    /// letter, and a period at the end.
    private static func sentence(_ parts: [String]) -> String {
        let joined = parts.enumerated().map { index, part in
            index == 0 ? part : part.prefix(1).lowercased() + part.dropFirst()
        }
        return joined.joined(separator: "; ") + "."
    }

    /// A sync's push, its pulls together, and the synced tables the service does not have.
    private static func parts(of result: SyncRunResult) -> [String] {
        var parts = result.pushed.map { [$0.summary] } ?? []
        let received = result.pulled.reduce(0) { $0 + $1.result.received }
        if result.pulled.count == 1 {
            parts.append(PullResult.summary(received: received, table: result.pulled[0].table))
        } else {
            parts.append(PullResult.summary(received: received, table: nil) + " from \(result.pulled.count) tables")
        }
        if !result.missingTables.isEmpty {
            parts.append(
                "the service has no table " + result.missingTables.map { "“\($0)”" }.joined(separator: ", ")
                    + " (check the synced tables)")
        }
        return parts
    }

    /// "Verified todoitem, orders: 2 rows differ, 1 with no reason (a silent divergence)."
    private static func sentence(verified reports: [VerifyReport]) -> String {
        let differing = reports.reduce(0) { $0 + $1.differences.count }
        let silent = reports.reduce(0) { $0 + $1.silentDivergences.count }
        let tables = reports.map(\.table).joined(separator: ", ")
        if differing == 0 { return "Verified \(tables): this copy matches the service." }
        let rows = differing == 1 ? "1 row differs" : "\(differing.formatted()) rows differ"
        if silent == 0 { return "Verified \(tables): \(rows), each with a reason." }
        return "Verified \(tables): \(rows), \(silent.formatted()) with no reason (a silent divergence)."
    }

    /// What became of the one operation a decision (Use Client, a pick, an overturn) pushed.
    private static func sentence(decided outcome: OperationOutcome) -> String {
        switch outcome {
        case .pushed: "Pushed the change."
        case .conflict: "The service holds a newer copy: the change is a new conflict to resolve."
        case .failed: "The service refused the change."
        case .resolvedByServer: "The service's copy was kept, as the table's conflict policy says."
        case .skipped: "The change was not sent."
        }
    }
}
