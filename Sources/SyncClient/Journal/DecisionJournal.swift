import Foundation
import GRDB
import SyncProtocol

/// A context's conflict journal: every decision made about a conflict (by a person, a policy or the
/// service), newest first, and what can be done with one afterwards (see ``SyncContext/journal``).
public struct DecisionJournal: Sendable {
    let queue: SyncOperationQueue
    let jobs: JobSlot
    /// Pushes an overturn at once.
    let pusher: Pusher

    /// One page of the entries matching `query`, newest first.
    public func entries(_ query: JournalQuery = JournalQuery()) throws(SyncError) -> JournalPage {
        try queue.store.read { [journal = queue.journal] db in try journal.page(db, query) }
    }

    /// The entry with this id, if the journal still keeps it.
    public func entry(_ id: String) throws(SyncError) -> JournalEntry? {
        try queue.store.read { [journal = queue.journal] db in try journal.entry(db, id: id) }
    }

    /// How many entries the journal keeps now.
    public func count() throws(SyncError) -> Int {
        try queue.store.read { [journal = queue.journal] db in try journal.count(db) }
    }

    /// The ids of those of `entries` whose item has a queued local change (they cannot be
    /// overturned), in one read: a page asks this of every entry it shows.
    public func blockedByLocalChanges(_ entries: [JournalEntry]) throws(SyncError) -> Set<String> {
        guard !entries.isEmpty else { return [] }
        let changed = try queue.store.read { db in
            let pairs = Array(repeating: "(?, ?)", count: entries.count).joined(separator: ", ")
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT DISTINCT tableName, itemId FROM \(OperationRecord.databaseTableName) "
                    + "WHERE (tableName, itemId) IN (VALUES \(pairs))",
                arguments: StatementArguments(entries.flatMap { [$0.table, $0.itemId] }))
            return Set(
                rows.map { row -> String in
                    let table: String = row["tableName"]
                    let itemId: String = row["itemId"]
                    return table + "\u{0}" + itemId
                })
        }
        return Set(entries.filter { changed.contains($0.table + "\u{0}" + $0.itemId) }.map(\.id))
    }

    /// Overturns an entry: what lost becomes a new change of the item, sent now against the version
    /// the entry left on the service, and journaled as an overturn when the service applies it.
    ///
    /// - The outcome kept the item and the losing side had values: they go out as an update.
    /// - The outcome deleted the item ("Accept the delete", "Delete it anyway"): the losing values
    ///   re-create it — an insert, which a service that keeps the deleted row (soft delete) answers
    ///   with 409 and the deleted copy, and the row is then undeleted and updated.
    /// - The outcome kept an item the losing side had deleted: it is deleted.
    ///
    /// If the service moved since (another version, or an item that is back), its answer makes this a
    /// new conflict, never a silent overwrite.
    ///
    /// - Throws: ``ConflictDecisionError`` when the entry is unknown, the item has a newer local
    ///   change, or both sides of the entry had deleted the item.
    public func overturn(_ entryId: String, batch: String? = nil) async throws -> OperationOutcome {
        let outcome = try await jobs.run(.overturn(entryId: entryId)) { [self] in
            await JobEnding.of { .decided(try await runOverturn(entryId, batch: batch)) }
        }
        guard case .decided(let decided) = outcome else { preconditionFailure("an overturn ends decided") }
        return decided
    }

    /// Undoes a bulk decision: overturns each of its entries, newest first. Entries whose item has
    /// a newer local change are left alone and reported as failed.
    public func undo(batch: String) async throws -> BulkDecision {
        let entries = try queue.store.read { [journal = queue.journal] db in
            var page = try journal.page(db, JournalQuery(batch: batch, limit: 100))
            var entries = page.entries
            while let next = page.next {
                page = try journal.page(db, JournalQuery(batch: batch, before: next, limit: 100))
                entries += page.entries
            }
            return entries
        }
        guard !entries.isEmpty else { throw ConflictDecisionError.batchNotFound(batch) }
        let undoBatch = UUID().uuidString.lowercased()
        var outcomes: [String: OperationOutcome] = [:]
        for entry in entries {
            do {
                outcomes[entry.id] = try await overturn(entry.id, batch: undoBatch)
            } catch let error as ConflictDecisionError {
                if case .newerLocalChange = error { outcomes[entry.id] = .skipped } else { throw error }
            }
        }
        return BulkDecision(batch: undoBatch, outcomes: [:], overturned: outcomes)
    }

    // MARK: Overturn

    /// Overturns a journal entry (see ``DecisionJournal/overturn(_:batch:)``) in the running job.
    func runOverturn(_ entryId: String, batch: String?) async throws -> OperationOutcome {
        guard let entry = try entry(entryId) else { throw ConflictDecisionError.entryNotFound(entryId) }
        let driver = pusher.pushDriver(try await pusher.gate.ready(for: .push))
        let operationId = try await queueOverturn(entry, batch: batch)
        return try await pusher.pushOne(operationId, driver: driver)
    }

    /// Writes the losing values into the row (or removes it), queues the change, and holds its
    /// journal entry with it, in one transaction.
    private func queueOverturn(_ entry: JournalEntry, batch: String?) async throws -> Int64 {
        let queued = try await queue.store.asyncWrite {
            [store = queue.store, queue] db -> Result<Int64, ConflictDecisionError> in
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
