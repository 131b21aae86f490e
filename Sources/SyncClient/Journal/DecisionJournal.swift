import Foundation
import GRDB

/// A context's conflict journal: every decision made about a conflict (by a person, a policy or the
/// service), newest first, and what can be done with one afterwards (see ``SyncContext/journal``).
public struct DecisionJournal: Sendable {
    let context: SyncContext

    /// One page of the entries matching `query`, newest first.
    public func entries(_ query: JournalQuery = JournalQuery()) throws(SyncError) -> JournalPage {
        try context.read { [journal = context.queue.journal] db in try journal.page(db, query) }
    }

    /// The entry with this id, if the journal still keeps it.
    public func entry(_ id: String) throws(SyncError) -> JournalEntry? {
        try context.read { [journal = context.queue.journal] db in try journal.entry(db, id: id) }
    }

    /// How many entries the journal keeps now.
    public func count() throws(SyncError) -> Int {
        try context.read { [journal = context.queue.journal] db in try journal.count(db) }
    }

    /// The ids of those of `entries` whose item has a queued local change (they cannot be
    /// overturned), in one read: a page asks this of every entry it shows.
    public func blockedByLocalChanges(_ entries: [JournalEntry]) throws(SyncError) -> Set<String> {
        guard !entries.isEmpty else { return [] }
        let changed = try context.read { db in
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
        let outcome = try await context.jobs.run(.overturn(entryId: entryId)) { [context] in
            .decided(try await context.runOverturn(entryId, batch: batch))
        }
        guard case .decided(let decided) = outcome else { preconditionFailure("an overturn ends decided") }
        return decided
    }

    /// Undoes a bulk decision: overturns each of its entries, newest first. Entries whose item has
    /// a newer local change are left alone and reported as failed.
    public func undo(batch: String) async throws -> BulkDecision {
        let entries = try context.read { [journal = context.queue.journal] db in
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
}

extension SyncContext {
    /// The conflict journal: its entries, and Overturn and Undo.
    public nonisolated var journal: DecisionJournal { DecisionJournal(context: self) }
}
