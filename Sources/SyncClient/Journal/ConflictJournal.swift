import Foundation
import GRDB
import Storage
import SyncProtocol

/// The persistent journal of conflict outcomes (`__journal`): the one code that reads and writes it,
/// through its rows' types (``JournalRecord``, ``HeldDecisionRecord``), which hold the schema.
///
/// Every method that takes a `Database` runs inside the caller's transaction, so an outcome and its
/// entry are stored together. The journal keeps the newest ``retention`` entries (10,000 unless the
/// store says otherwise, see ``SyncContext/setJournalRetention(_:)``).
///
/// A decision that must reach the service first (Use Client, a merge, a pick, an overturn) is *held*
/// with its operation (`__journal_pending`, written in the transaction that queues the decision) and
/// *settled* into `__journal` by the transaction that applies the service's answer to the row —
/// whichever push gets that answer, even one after a crash. A new conflict or a refusal releases it:
/// that decision did not happen.
struct ConflictJournal: Sendable {
    private typealias Columns = JournalRecord.Columns

    /// Stores an entry (its `sequence` is assigned) and drops the oldest beyond the retention.
    @discardableResult
    func record(_ db: Database, _ entry: JournalEntry) throws -> JournalEntry {
        try JournalRecord(entry: entry).insert(db)
        var stored = entry
        stored.sequence = db.lastInsertedRowID
        try Self.retention.dropBeyond(db, newest: stored.sequence)
        try HistoryLog().recordDecision(db, journalSequence: stored.sequence)
        return stored
    }

    /// Holds `entry` until operation `operationId` is applied by the service (see ``settle(_:operationId:result:)``).
    func hold(_ db: Database, operationId: Int64, _ entry: JournalEntry) throws {
        try HeldDecisionRecord(operationId: operationId, entry: entry).insert(db)
    }

    /// The service applied operation `operationId`: its held entry, if any, is recorded with the
    /// item as it now stands (`result`, nil when the outcome is a delete).
    func settle(_ db: Database, operationId: Int64, result: Item?) throws {
        let resultText = JournalRecord.searchText(itemId: nil, [result])
        // A copy in SQL (INSERT ... SELECT): the held decision is never decoded.
        try db.cachedStatement(
            sql: """
                INSERT INTO __journal (id, tableName, itemId, operation, decision, decidedBy, base, client, server,
                    result, versionBefore, versionAfter, recordedAt, batch, overturns, searchText)
                SELECT id, tableName, itemId, operation, decision, decidedBy, base, client, server,
                    ?, versionBefore, ?, ?, batch, overturns, searchText || ?
                FROM __journal_pending WHERE operationId = ?
                """
        ).execute(arguments: [
            ItemCoding.encode(result), result?[SystemColumn.version]?.stringValue, Timestamp.string(Date()),
            resultText.isEmpty ? "" : "\n" + resultText, operationId,
        ])
        guard db.changesCount > 0 else { return }
        let sequence = db.lastInsertedRowID
        try Self.retention.dropBeyond(db, newest: sequence)
        try release(db, operationId: operationId)
        try HistoryLog().recordDecision(db, journalSequence: sequence)
    }

    /// Those of `operationIds` that hold a decision (``hold(_:operationId:_:)``).
    func held(_ db: Database, among operationIds: [Int64]) throws -> Set<Int64> {
        guard !operationIds.isEmpty else { return [] }
        return try Int64.fetchSet(
            db.cachedStatement(
                sql: "SELECT operationId FROM \(HeldDecisionRecord.databaseTableName) "
                    + "WHERE operationId IN (\(sqlParameters(operationIds.count)))"),
            arguments: StatementArguments(positional: operationIds))
    }

    /// Forgets the decision held for operation `operationId` (it met a new conflict or a refusal).
    func release(_ db: Database, operationId: Int64) throws {
        try HeldDecisionRecord.delete(db, where: HeldDecisionRecord.operationId, is: operationId)
    }

    /// The newest entries kept: 10,000 unless the store says otherwise.
    static let retention = Retention(
        table: JournalRecord.databaseTableName, order: "sequence", key: "journalRetention", fallback: 10_000)

    /// One entry by its stable id.
    func entry(_ db: Database, id: String) throws -> JournalEntry? {
        try JournalRecord.filter(Columns.id == id).fetchOne(db)?.entry
    }

    /// One entry by its place in the journal.
    func entry(_ db: Database, sequence: Int64) throws -> JournalEntry? {
        try JournalRecord.fetchOne(db, key: sequence)?.entry
    }

    /// The entries matching `query`, newest first, one page (keyset paging on `sequence`).
    func page(_ db: Database, _ query: JournalQuery) throws -> JournalPage {
        var request = JournalRecord.order(Columns.sequence.desc).limit(query.limit + 1)
        if let decision = query.decision { request = request.filter(Columns.decision == decision.rawValue) }
        if let itemId = query.itemId { request = request.filter(Columns.itemId == itemId) }
        if let batch = query.batch { request = request.filter(Columns.batch == batch) }
        if let text = query.text {
            request = request.filter(Columns.searchText.like("%" + TableQuery.escapeLike(text) + "%", escape: "\\"))
        }
        if let before = query.before { request = request.filter(Columns.sequence < before) }
        let (entries, next) = try request.fetchAll(db).map(\.entry).keysetPage(limit: query.limit, key: \.sequence)
        return JournalPage(entries: entries, next: next)
    }

    /// How many entries the journal holds.
    func count(_ db: Database) throws -> Int {
        try JournalRecord.fetchCount(db)
    }
}
