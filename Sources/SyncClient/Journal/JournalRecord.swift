import Foundation
import GRDB
import Storage
import SyncProtocol

/// One row of `__journal`, a conflict outcome, and the owner of its schema. A decision, decider or
/// operation this version does not know is ``StoreFailure/Kind/corrupt``, never read as another.
struct JournalRecord: StoreRecord, PersistableRecord {
    static let databaseTableName = "__journal"

    /// The columns, as queries name them (``HeldDecisionRecord`` shares those of a decision).
    enum Columns {
        static let sequence = Column("sequence")
        static let id = Column("id")
        static let tableName = Column("tableName")
        static let itemId = Column("itemId")
        static let operation = Column("operation")
        static let decision = Column("decision")
        static let decidedBy = Column("decidedBy")
        static let base = Column("base")
        static let client = Column("client")
        static let server = Column("server")
        static let result = Column("result")
        static let versionBefore = Column("versionBefore")
        static let versionAfter = Column("versionAfter")
        static let recordedAt = Column("recordedAt")
        static let batch = Column("batch")
        static let overturns = Column("overturns")
        /// The item id and the user-visible text values, one per line, for text search (never read back).
        static let searchText = Column("searchText")
    }

    /// The entry the row holds (a sequence of 0: not stored yet).
    var entry: JournalEntry

    func encode(to container: inout PersistenceContainer) {
        for (column, value) in zip(Self.decisionColumns, Self.decisionValues(entry)) { container[column] = value }
        container[Columns.result] = ItemCoding.encode(entry.result)
        container[Columns.versionAfter] = entry.versionAfter
        container[Columns.recordedAt] = Timestamp.string(entry.recordedAt)
        container[Columns.searchText] = Self.searchText(
            itemId: entry.itemId, [entry.client, entry.server, entry.result, entry.base])
    }

    /// The columns of the decision itself, which a held one (``HeldDecisionRecord``) has too.
    static let decisionColumns = [
        Columns.id, Columns.tableName, Columns.itemId, Columns.operation, Columns.decision, Columns.decidedBy,
        Columns.base, Columns.client, Columns.server, Columns.versionBefore, Columns.batch, Columns.overturns,
    ]

    /// The values of ``decisionColumns`` for `entry`, in their order.
    static func decisionValues(_ entry: JournalEntry) -> [(any DatabaseValueConvertible)?] {
        [
            entry.id, entry.table, entry.itemId, entry.operation.rawValue, entry.decision.rawValue,
            entry.decidedBy.rawValue, ItemCoding.encode(entry.base), ItemCoding.encode(entry.client),
            ItemCoding.encode(entry.server), entry.versionBefore, entry.batch, entry.overturns,
        ]
    }

    /// The user-visible text values of `items` (and the item id), one per line, for text search.
    static func searchText(itemId: String?, _ items: [Item?]) -> String {
        var parts = itemId.map { [$0] } ?? []
        for item in items {
            for (key, value) in (item ?? [:]).sorted(by: { $0.key < $1.key })
            where !SystemColumn.all.contains(key) {
                if case .string(let text) = value { parts.append(text) }
            }
        }
        return parts.joined(separator: "\n")
    }

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
}

extension JournalRecord {
    /// Reads a row by column name.
    init(row: Row) throws {
        entry = JournalEntry(
            id: row[Columns.id], sequence: row[Columns.sequence], table: row[Columns.tableName],
            itemId: row[Columns.itemId], operation: try Self.known(row, Columns.operation),
            base: ItemCoding.decode(row[Columns.base]), client: ItemCoding.decode(row[Columns.client]),
            server: ItemCoding.decode(row[Columns.server]), result: ItemCoding.decode(row[Columns.result]),
            decision: try Self.known(row, Columns.decision), decidedBy: try Self.known(row, Columns.decidedBy),
            versionBefore: row[Columns.versionBefore], versionAfter: row[Columns.versionAfter],
            recordedAt: try Self.time(row, Columns.recordedAt), batch: row[Columns.batch],
            overturns: row[Columns.overturns])
    }
}
