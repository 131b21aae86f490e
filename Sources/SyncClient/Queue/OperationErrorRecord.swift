import Foundation
import GRDB
import SyncProtocol

/// One row of `__errors`, the last error of a queued operation (dropped with it), and the owner of
/// its schema. A kind this version does not know is ``StoreFailure/Kind/corrupt``.
struct OperationErrorRecord: StoreRecord, PersistableRecord {
    static let databaseTableName = "__errors"

    /// The columns, as queries name them.
    enum Columns {
        static let operationId = Column("operationId")
        static let kind = Column("kind")
        static let status = Column("status")
        static let message = Column("message")
        static let serverItem = Column("serverItem")
        static let clientItem = Column("clientItem")
        static let recordedAt = Column("recordedAt")
    }

    /// The error the row holds.
    var error: OperationError

    func encode(to container: inout PersistenceContainer) {
        container[Columns.operationId] = error.operationId
        container[Columns.kind] = error.kind.rawValue
        container[Columns.status] = error.status
        container[Columns.message] = error.message
        container[Columns.serverItem] = ItemCoding.encode(error.serverItem)
        container[Columns.clientItem] = ItemCoding.encode(error.clientItem)
        container[Columns.recordedAt] = Timestamp.string(error.recordedAt)
    }

    /// The table as the first schema created it, after `__operations`.
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE __errors (
                    operationId INTEGER PRIMARY KEY REFERENCES __operations (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    status INTEGER,
                    message TEXT NOT NULL,
                    serverItem TEXT,
                    clientItem TEXT,
                    recordedAt TEXT NOT NULL
                );
                """)
    }
}

extension OperationErrorRecord {
    /// Reads a row by column name.
    init(row: Row) throws {
        error = OperationError(
            operationId: row[Columns.operationId], kind: try Self.known(row, Columns.kind),
            status: row[Columns.status], message: row[Columns.message],
            serverItem: ItemCoding.decode(row[Columns.serverItem]),
            clientItem: ItemCoding.decode(row[Columns.clientItem]), recordedAt: try Self.time(row, Columns.recordedAt))
    }
}
