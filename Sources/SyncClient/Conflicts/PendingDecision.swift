import Foundation
import SyncProtocol

/// A decision that pushes local values, waiting for the service's answer before it is journaled.
struct PendingDecision: Sendable {
    var decision: JournalEntry.Decision
    var decidedBy: JournalEntry.Decider
    /// Values for the row's user columns before it is pushed (a merge or a pick); nil keeps the row.
    var values: Item? = nil
    var batch: String? = nil
    var overturns: String? = nil
}

extension JournalEntry {
    /// The entry for an outcome of `conflict` (its sequence is assigned when it is recorded).
    init(
        _ conflict: SyncConflict, decision: Decision, decidedBy: Decider, result: Item?, versionAfter: String?,
        batch: String? = nil, overturns: String? = nil
    ) {
        let client = conflict.operation.kind == .delete ? nil : conflict.clientItem
        self.init(
            id: UUID().uuidString.lowercased(), sequence: 0, table: conflict.operation.table,
            itemId: conflict.operation.itemId, operation: conflict.operation.kind, base: conflict.base,
            client: client, server: conflict.serverItem, result: result, decision: decision, decidedBy: decidedBy,
            versionBefore: conflict.serverItem?[SystemColumn.version]?.stringValue, versionAfter: versionAfter,
            recordedAt: Date(), batch: batch, overturns: overturns)
    }
}
