import Foundation
import GRDB
import SyncProtocol

extension SyncContext {
    // MARK: Overturn

    /// Overturns a journal entry (see ``DecisionJournal/overturn(_:batch:)``) in the running job.
    func runOverturn(_ entryId: String, batch: String?) async throws -> OperationOutcome {
        guard let entry = try journal.entry(entryId) else { throw ConflictDecisionError.entryNotFound(entryId) }
        let driver = pushDriver(try await readyTransport(.push, table: nil))
        let operationId = try await queueOverturn(entry, batch: batch)
        return try await pushOne(operationId, driver: driver)
    }

    /// Writes the losing values into the row (or removes it), queues the change, and holds its
    /// journal entry with it, in one transaction.
    private func queueOverturn(_ entry: JournalEntry, batch: String?) async throws -> Int64 {
        let queued = try await write { [store, queue] db -> Result<Int64, ConflictDecisionError> in
            guard try queue.operations(db, table: entry.table, itemId: entry.itemId).isEmpty else {
                return .failure(.newerLocalChange(entry: entry.id, itemId: entry.itemId))
            }
            let table = try store.description(of: entry.table, in: db)
            let note = "overturning the journal's \(entry.decision.label) of \(Timestamp.string(entry.recordedAt))"
            let id: Int64
            let kind: OperationKind
            var resulting = entry.result
            resulting?[SystemColumn.version] = entry.versionAfter.map(JSONValue.string)
            switch (entry.losingValues, resulting) {
            case (let values?, let resulting?):
                kind = .update
                let row = Self.row(resulting, taking: values, of: table)
                try store.writeItem(db, table: table, item: row)
                id = try queue.enqueue(
                    db, kind: kind, table: entry.table, itemId: entry.itemId, before: resulting, after: row, note: note)
            case (let values?, nil):
                kind = .insert
                let row = Self.row([SystemColumn.id: .string(entry.itemId)], taking: values, of: table)
                try store.writeItem(db, table: table, item: row)
                id = try queue.enqueue(
                    db, kind: kind, table: entry.table, itemId: entry.itemId, before: nil, after: row, note: note)
                try queue.markRecreate(db, id: id)
            case (nil, let resulting?):
                kind = .delete
                try store.deleteItem(db, table: entry.table, id: entry.itemId)
                id = try queue.enqueue(
                    db, kind: kind, table: entry.table, itemId: entry.itemId, before: resulting, after: nil, note: note)
            case (nil, nil):
                return .failure(.nothingToOverturn(entry: entry.id, itemId: entry.itemId))
            }
            try queue.journal.hold(
                db, operationId: id,
                JournalEntry(
                    id: UUID().uuidString.lowercased(), sequence: 0, table: entry.table, itemId: entry.itemId,
                    operation: kind, base: entry.result, client: entry.losingValues, server: entry.result,
                    result: nil, decision: .overturn, decidedBy: .person, versionBefore: entry.versionAfter,
                    versionAfter: nil, recordedAt: Date(), batch: batch, overturns: entry.id))
            return .success(id)
        }
        return try queued.get()
    }

    /// `row` with every user column of `table` taken from `values` (null where they have none).
    private static func row(_ row: Item, taking values: Item, of table: TableDescription) -> Item {
        var row = row
        for column in table.columns { row[column.name] = values[column.name] ?? .null }
        // Fields of columns the table did not have when the description was read (the write adds them).
        for (name, value) in values where !SystemColumn.all.contains(name) && table.columnType(name) == nil {
            row[name] = value
        }
        return row
    }

}

/// What a bulk decision (or its undo) did.
public struct BulkDecision: Sendable, Hashable {
    /// The batch id its journal entries carry.
    public var batch: String
    /// The outcome per conflicted operation.
    public var outcomes: [Int64: OperationOutcome]
    /// For an undo: the outcome per overturned journal entry.
    public var overturned: [String: OperationOutcome] = [:]
}

/// What a bulk decision would do, before it is applied.
public struct BulkPreview: Sendable, Hashable {
    /// Use Client or Use Server.
    public var resolution: ConflictResolution
    /// One per conflict still open.
    public var conflicts: [Conflict]

    /// One conflict of the preview.
    public struct Conflict: Sendable, Hashable {
        /// The conflicted operation.
        public var operationId: Int64
        /// The item's id.
        public var itemId: String
        /// The todo's text, when it has one.
        public var title: String?
        /// The fields that take another value.
        public var fields: [String]
        /// Whether the decision deletes the item (here or on the service).
        public var deletes: Bool
    }

    /// How many conflicts change each field, by field name.
    public var fieldCounts: [String: Int] {
        conflicts.reduce(into: [:]) { counts, conflict in
            for field in conflict.fields { counts[field, default: 0] += 1 }
        }
    }
}
