import Foundation
import GRDB
import Storage

/// One row of `__journal_pending`, a decision waiting for the service's answer to its operation
/// (dropped with the operation), and the owner of its schema. Written only: settling one copies it
/// into `__journal` in SQL (``ConflictJournal/settle(_:operationId:result:)``).
struct HeldDecisionRecord: TableRecord {
    static let databaseTableName = "__journal_pending"

    /// The operation it waits for; its other columns are ``JournalRecord/Columns`` of a decision.
    static let operationId = Column("operationId")

    /// The operation whose answer settles it.
    var operationId: Int64
    /// The decision, without its result, its version after and its time (known when settled).
    var entry: JournalEntry

    /// Stores it, in place of a decision the operation held before. One cached statement: GRDB's
    /// generic insert built a container and its SQL at every call, and cost twice as much (a
    /// conflict settled by policy holds one decision).
    func insert(_ db: Database) throws {
        let values =
            [operationId] + JournalRecord.decisionValues(entry) + [
                JournalRecord.searchText(itemId: entry.itemId, [entry.client, entry.server, entry.base])
            ]
        try db.cachedStatement(sql: Self.insertSQL).execute(arguments: StatementArguments(values))
    }

    private static let insertSQL: String = {
        let names =
            [operationId.name] + JournalRecord.decisionColumns.map(\.name) + [JournalRecord.Columns.searchText.name]
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO \(databaseTableName) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    }()

    /// Where decisions waited for the service's answer in v3, as JSON (moved by ``columnsMigration``).
    static let jsonMigration = StoreMigration("v3-held-journal-entries") { db in
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
    static let columnsMigration = StoreMigration("v4-held-journal-columns") { db in
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
        for row in try Row.fetchAll(db, sql: "SELECT operationId, entry FROM __journal_held") {
            let entry = try JSONDecoder().decode(JournalEntry.self, from: Data((row["entry"] as String).utf8))
            try HeldDecisionRecord(operationId: row["operationId"], entry: entry).insert(db)
        }
        try db.execute(sql: "DROP TABLE __journal_held")
    }
}
