import Foundation
import GRDB
import Storage
import SyncProtocol

/// One row of `__operations`, the queue's table, and the owner of its schema. Read by column name
/// (never by position); a value this version does not know is ``StoreFailure/Kind/corrupt`` (see
/// ``StoredValue``), never pushed as something else.
struct OperationRecord: StoreRecord, PersistableRecord {
    static let databaseTableName = "__operations"

    /// The columns, as queries name them.
    enum Columns {
        static let id = Column("id")
        static let tableName = Column("tableName")
        static let itemId = Column("itemId")
        static let kind = Column("kind")
        static let state = Column("state")
        static let item = Column("item")
        static let base = Column("base")
        static let attempts = Column("attempts")
        static let queuedAt = Column("queuedAt")
        static let lastAttemptAt = Column("lastAttemptAt")
        static let lastStatus = Column("lastStatus")
        static let message = Column("message")
        static let recreate = Column("recreate")
        /// Bodies of earlier attempts (see ``OperationMark``), written by push transitions only.
        static let earlierBodies = Column("earlierBodies")
        static let heldAt = Column("heldAt")
        static let heldReason = Column("heldReason")
        static let changedColumns = Column("changedColumns")
    }

    /// The columns ``SyncOperationQueue/update(_:_:)`` saves: all but the item's identity, when it
    /// was queued, the hold (a person's) and the earlier bodies (a push's).
    static let updatedColumns = [
        Columns.kind, Columns.state, Columns.item, Columns.base, Columns.attempts, Columns.lastAttemptAt,
        Columns.lastStatus, Columns.message, Columns.recreate, Columns.changedColumns,
    ]

    /// Saves ``updatedColumns`` of the row with the id that follows their values.
    static let updateSQL =
        "UPDATE \(databaseTableName) SET \(updatedColumns.map { "\($0.name) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// The values of ``updatedColumns``, in their order.
    var updatedValues: [(any DatabaseValueConvertible)?] {
        [
            operation.kind.rawValue, operation.state.rawValue, ItemCoding.encode(operation.item),
            ItemCoding.encode(operation.base), operation.attempts, operation.lastAttemptAt.map(Timestamp.string),
            operation.lastStatus, operation.message, operation.recreate, Self.encode(operation.changedColumns),
        ]
    }

    /// The operation the row holds (an id of 0: not stored yet).
    var operation: TableOperation

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = operation.id == 0 ? nil : operation.id
        container[Columns.tableName] = operation.table
        container[Columns.itemId] = operation.itemId
        container[Columns.queuedAt] = Timestamp.string(operation.queuedAt)
        container[Columns.heldAt] = operation.hold.map { Timestamp.string($0.since) }
        container[Columns.heldReason] = operation.hold?.reason
        for (column, value) in zip(Self.updatedColumns, updatedValues) { container[column] = value }
    }

    /// `changedColumns` as stored: the names as a JSON array, sorted (nil: none kept).
    static func encode(_ columns: Set<String>?) -> String? {
        columns.map { JSONValue.array($0.sorted().map(JSONValue.string)).jsonText }
    }

    /// The names of a stored `changedColumns`.
    static func decodeColumns(_ text: String?) -> Set<String>? {
        guard let text, case .array(let names)? = ItemCoding.value(text) else { return nil }
        return Set(names.compactMap(\.stringValue))
    }

    // MARK: Schema

    /// The table as the first schema created it (``OperationErrorRecord`` refers to it).
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE __operations (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    tableName TEXT NOT NULL,
                    itemId TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    state TEXT NOT NULL,
                    item TEXT,
                    base TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    queuedAt TEXT NOT NULL,
                    lastAttemptAt TEXT,
                    lastStatus INTEGER,
                    message TEXT,
                    recreate INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX __operations_item ON __operations (tableName, itemId);
                """)
    }

    /// Where stores written before `v2-earlier-bodies` kept the bodies of earlier attempts.
    static let legacyEarlierKey = "__earlier"

    /// Bodies of earlier attempts used to hide under an `__earlier` key inside `item`.
    static let earlierBodiesMigration = StoreMigration("v2-earlier-bodies") { db in
        try db.alter(table: OperationRecord.databaseTableName) { $0.add(column: Columns.earlierBodies.name, .text) }
        let rows = try Row.fetchAll(
            db, OperationRecord.select(Columns.id, Columns.item).filter(Columns.item.like("%\"__earlier\"%")))
        for row in rows {
            guard var item = ItemCoding.decode(row[Columns.item]),
                case .array(let earlier)? = item.removeValue(forKey: OperationRecord.legacyEarlierKey)
            else { continue }
            try OperationRecord.filter(key: row[Columns.id] as Int64).updateAll(
                db, Columns.item.set(to: ItemCoding.encode(item)),
                Columns.earlierBodies.set(to: JSONValue.array(earlier).jsonText))
        }
    }

    /// Adds the hold of an operation (see ``TableOperation/hold``): when and why a person held it.
    static let holdMigration = StoreMigration("v9-held-operations") { db in
        try db.alter(table: OperationRecord.databaseTableName) { table in
            table.add(column: Columns.heldAt.name, .text)
            table.add(column: Columns.heldReason.name, .text)
        }
    }

    /// Adds the columns each queued change sets (see ``TableOperation/changedColumns``).
    static let changedColumnsMigration = StoreMigration("v10-changed-columns") { db in
        try db.alter(table: OperationRecord.databaseTableName) { $0.add(column: Columns.changedColumns.name, .text) }
    }
}

extension OperationRecord {
    /// Reads a row by column name.
    init(row: Row) throws {
        operation = TableOperation(
            id: row[Columns.id], table: row[Columns.tableName], itemId: row[Columns.itemId],
            kind: try Self.known(row, Columns.kind), state: try Self.known(row, Columns.state),
            item: ItemCoding.decode(row[Columns.item]), base: ItemCoding.decode(row[Columns.base]),
            attempts: row[Columns.attempts], queuedAt: try Self.time(row, Columns.queuedAt),
            lastAttemptAt: try Self.time(row, Columns.lastAttemptAt), lastStatus: row[Columns.lastStatus],
            message: row[Columns.message], recreate: row[Columns.recreate],
            hold: try (Self.time(row, Columns.heldAt) as Date?).map {
                OperationHold(since: $0, reason: row[Columns.heldReason])
            },
            changedColumns: Self.decodeColumns(row[Columns.changedColumns]))
    }
}
