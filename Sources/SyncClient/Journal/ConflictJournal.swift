import Foundation
import GRDB
import Storage
import SyncProtocol

/// The persistent journal of conflict outcomes (`__journal`): the one owner of its reads and writes.
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
    static let migration = StoreMigration("v2-conflict-journal") { db in
        try db.execute(
            sql: """
                CREATE TABLE __journal (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    tableName TEXT NOT NULL,
                    itemId TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    decision TEXT NOT NULL,
                    decidedBy TEXT NOT NULL,
                    base TEXT,
                    client TEXT,
                    server TEXT,
                    result TEXT,
                    versionBefore TEXT,
                    versionAfter TEXT,
                    recordedAt TEXT NOT NULL,
                    batch TEXT,
                    overturns TEXT,
                    searchText TEXT NOT NULL
                );
                CREATE INDEX __journal_item ON __journal (itemId, sequence);
                CREATE INDEX __journal_decision ON __journal (decision, sequence);
                CREATE INDEX __journal_batch ON __journal (batch) WHERE batch IS NOT NULL;
                """)
    }

    /// Where decisions wait for the service's answer, one per operation (dropped with it).
    static let heldMigration = StoreMigration("v3-held-journal-entries") { db in
        try db.execute(
            sql: """
                CREATE TABLE __journal_held (
                    operationId INTEGER PRIMARY KEY REFERENCES __operations (id) ON DELETE CASCADE,
                    entry TEXT NOT NULL
                )
                """)
    }

    /// Held decisions in the journal's own columns, so settling one is a copy in SQL: the JSON of
    /// v3 cost a conflict settled by policy a third of its transaction to encode and decode.
    static let heldColumnsMigration = StoreMigration("v4-held-journal-columns") { db in
        try db.execute(
            sql: """
                CREATE TABLE __journal_pending (
                    operationId INTEGER PRIMARY KEY REFERENCES __operations (id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    tableName TEXT NOT NULL,
                    itemId TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    decision TEXT NOT NULL,
                    decidedBy TEXT NOT NULL,
                    base TEXT,
                    client TEXT,
                    server TEXT,
                    versionBefore TEXT,
                    batch TEXT,
                    overturns TEXT,
                    searchText TEXT NOT NULL
                )
                """)
        let journal = ConflictJournal()
        for row in try Row.fetchAll(db, sql: "SELECT operationId, entry FROM __journal_held") {
            let entry = try JSONDecoder().decode(JournalEntry.self, from: Data((row[1] as String).utf8))
            try journal.hold(db, operationId: row[0], entry)
        }
        try db.execute(sql: "DROP TABLE __journal_held")
    }

    private static let columns =
        "sequence, id, tableName, itemId, operation, decision, decidedBy, base, client, server, result, "
        + "versionBefore, versionAfter, recordedAt, batch, overturns"

    /// Stores an entry (its `sequence` is assigned) and drops the oldest beyond the retention.
    @discardableResult
    func record(_ db: Database, _ entry: JournalEntry) throws -> JournalEntry {
        try db.cachedStatement(
            sql: """
                INSERT INTO __journal (id, tableName, itemId, operation, decision, decidedBy, base, client, server,
                    result, versionBefore, versionAfter, recordedAt, batch, overturns, searchText)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            entry.id, entry.table, entry.itemId, entry.operation.rawValue, entry.decision.rawValue,
            entry.decidedBy.rawValue, ItemCoding.encode(entry.base), ItemCoding.encode(entry.client),
            ItemCoding.encode(entry.server), ItemCoding.encode(entry.result), entry.versionBefore,
            entry.versionAfter, Timestamp.string(entry.recordedAt), entry.batch, entry.overturns,
            Self.searchText(itemId: entry.itemId, [entry.client, entry.server, entry.result, entry.base]),
        ])
        var stored = entry
        stored.sequence = db.lastInsertedRowID
        try Self.retention.dropBeyond(db, newest: stored.sequence)
        try HistoryLog().recordDecision(db, journalSequence: stored.sequence)
        return stored
    }

    /// Holds `entry` until operation `operationId` is applied by the service (see ``settle(_:operationId:result:)``).
    func hold(_ db: Database, operationId: Int64, _ entry: JournalEntry) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO __journal_pending (operationId, id, tableName, itemId, operation, decision,
                    decidedBy, base, client, server, versionBefore, batch, overturns, searchText)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            operationId, entry.id, entry.table, entry.itemId, entry.operation.rawValue, entry.decision.rawValue,
            entry.decidedBy.rawValue, ItemCoding.encode(entry.base), ItemCoding.encode(entry.client),
            ItemCoding.encode(entry.server), entry.versionBefore, entry.batch, entry.overturns,
            Self.searchText(itemId: entry.itemId, [entry.client, entry.server, entry.base]),
        ])
    }

    /// The service applied operation `operationId`: its held entry, if any, is recorded with the
    /// item as it now stands (`result`, nil when the outcome is a delete).
    func settle(_ db: Database, operationId: Int64, result: Item?) throws {
        let resultText = Self.searchText(itemId: nil, [result])
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
        return Set(
            try Int64.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT operationId FROM __journal_pending WHERE operationId IN (\(sqlParameters(operationIds.count)))"
                ),
                arguments: StatementArguments(positional: operationIds)))
    }

    /// Forgets the decision held for operation `operationId` (it met a new conflict or a refusal).
    func release(_ db: Database, operationId: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM __journal_pending WHERE operationId = ?")
            .execute(arguments: [operationId])
    }

    /// The newest entries kept: 10,000 unless the store says otherwise.
    static let retention = Retention(
        table: "__journal", order: "sequence", key: "journalRetention", fallback: 10_000)

    /// How many entries are kept.
    func retention(_ db: Database) throws -> Int { try Self.retention.count(db) }

    /// Keeps the newest `count` entries from now on (and drops older ones at once).
    func setRetention(_ db: Database, _ count: Int) throws { try Self.retention.set(db, count) }

    /// One entry by its stable id.
    func entry(_ db: Database, id: String) throws -> JournalEntry? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(Self.columns) FROM __journal WHERE id = ?"), arguments: [id]
        ).map(Self.entry)
    }

    /// One entry by its place in the journal.
    func entry(_ db: Database, sequence: Int64) throws -> JournalEntry? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(Self.columns) FROM __journal WHERE sequence = ?"), arguments: [sequence]
        ).map(Self.entry)
    }

    /// The entries matching `query`, newest first, one page (keyset paging on `sequence`).
    func page(_ db: Database, _ query: JournalQuery) throws -> JournalPage {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let decision = query.decision {
            conditions.append("decision = ?")
            arguments.append(decision.rawValue)
        }
        if let itemId = query.itemId {
            conditions.append("itemId = ?")
            arguments.append(itemId)
        }
        if let batch = query.batch {
            conditions.append("batch = ?")
            arguments.append(batch)
        }
        if let text = query.text {
            conditions.append("searchText LIKE ? ESCAPE '\\'")
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            arguments.append("%" + escaped + "%")
        }
        if let before = query.before {
            conditions.append("sequence < ?")
            arguments.append(before)
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        arguments.append(query.limit + 1)
        var entries = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT \(Self.columns) FROM __journal\(filter) ORDER BY sequence DESC LIMIT ?"),
            arguments: StatementArguments(arguments)
        ).map(Self.entry)
        var next: Int64?
        if entries.count > query.limit {
            entries.removeLast()
            next = entries.last?.sequence
        }
        return JournalPage(entries: entries, next: next)
    }

    /// How many entries the journal holds.
    func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM __journal")) ?? 0
    }

    private static func entry(_ row: Row) throws -> JournalEntry {
        JournalEntry(
            id: row["id"], sequence: row["sequence"], table: row["tableName"], itemId: row["itemId"],
            operation: try StoredValue.known(row, "operation", of: "__journal"),
            base: ItemCoding.decode(row["base"]), client: ItemCoding.decode(row["client"]),
            server: ItemCoding.decode(row["server"]), result: ItemCoding.decode(row["result"]),
            decision: try StoredValue.known(row, "decision", of: "__journal"),
            decidedBy: try StoredValue.known(row, "decidedBy", of: "__journal"), versionBefore: row["versionBefore"],
            versionAfter: row["versionAfter"], recordedAt: try StoredValue.time(row, "recordedAt", of: "__journal"),
            batch: row["batch"], overturns: row["overturns"])
    }

    /// The user-visible text values of `items` (and the item id), one per line, for text search.
    private static func searchText(itemId: String?, _ items: [Item?]) -> String {
        var parts = itemId.map { [$0] } ?? []
        for item in items {
            for (key, value) in (item ?? [:]).sorted(by: { $0.key < $1.key })
            where !SystemColumn.all.contains(key) {
                if case .string(let text) = value { parts.append(text) }
            }
        }
        return parts.joined(separator: "\n")
    }
}
