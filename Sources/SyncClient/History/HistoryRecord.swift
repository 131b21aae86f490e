import Foundation
import GRDB
import Storage
import SyncProtocol

/// One row of `__history`, as stored, and the owner of its schema. ``HistoryLog`` turns it into a
/// ``HistoryEvent`` (``event(of:)``): a kind or a time this version does not know is
/// ``StoreFailure/Kind/corrupt`` there, never read as another.
struct HistoryRecord: StoreRecord, PersistableRecord, Codable {
    static let databaseTableName = "__history"

    /// The kind of a pull page (expanded, per row, into ``HistoryEvent/Kind/pulled`` and its kin).
    static let pullPageKind = "pull-page"

    /// The columns a failure names (``HistoryLog`` reads the history in SQL).
    enum Columns {
        static let sequence = Column(CodingKeys.sequence)
        static let kind = Column(CodingKeys.kind)
        static let recordedAt = Column(CodingKeys.recordedAt)
        static let page = Column(CodingKeys.page)
    }

    /// Its place in the history (nil: not stored yet).
    var sequence: Int64? = nil
    /// When, as ``Timestamp`` writes it.
    var recordedAt = Timestamp.string(Date())
    var tableName: String
    /// Nil for a table-wide event and a pull page.
    var itemId: String? = nil
    /// A ``HistoryEvent/Kind`` or ``pullPageKind``.
    var kind: String
    var operationId: Int64? = nil
    var status: Int? = nil
    var version: String? = nil
    var previousVersion: String? = nil
    var detail: String? = nil
    /// A local edit's changed columns, as JSON.
    var changes: String? = nil
    var journalSequence: Int64? = nil
    /// A pull page's query id, number, tokens and rows (``PulledRows``).
    var queryId: String? = nil
    var page: Int? = nil
    var tokenBefore: String? = nil
    var tokenAfter: String? = nil
    var rows: String? = nil

    /// The event this row tells of `itemId`; nil when it is a pull page that does not hold it.
    /// A decision's journal entry is read by ``HistoryLog``.
    func event(of itemId: String) throws -> HistoryEvent? {
        var event = HistoryEvent(
            sequence: try StoredValue.present(sequence, Columns.sequence, of: Self.databaseTableName),
            recordedAt: try StoredValue.time(recordedAt, Columns.recordedAt, of: Self.databaseTableName),
            kind: .pulled, operationId: operationId, status: status, version: version,
            previousVersion: previousVersion, values: ItemCoding.decode(changes), detail: detail)
        guard kind == Self.pullPageKind else {
            event.kind = try StoredValue.known(kind, Columns.kind, of: Self.databaseTableName)
            return event
        }
        guard let pulled = PulledRows.entry(of: itemId, in: rows) else { return nil }
        event.kind = pulled.kind
        event.version = pulled.version
        event.pullPage = HistoryEvent.PullPage(
            queryId: queryId, page: try StoredValue.present(page, Columns.page, of: Self.databaseTableName),
            tokenBefore: tokenBefore, tokenAfter: tokenAfter)
        return event
    }

    static let migration = StoreMigration("v8-row-history") { db in
        try db.execute(
            sql: """
                CREATE TABLE __history (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    recordedAt TEXT NOT NULL,
                    tableName TEXT NOT NULL,
                    itemId TEXT,
                    kind TEXT NOT NULL,
                    operationId INTEGER,
                    status INTEGER,
                    version TEXT,
                    previousVersion TEXT,
                    detail TEXT,
                    changes TEXT,
                    journalSequence INTEGER,
                    queryId TEXT,
                    page INTEGER,
                    tokenBefore TEXT,
                    tokenAfter TEXT,
                    rows TEXT
                );
                CREATE INDEX __history_item ON __history (tableName, itemId, sequence) WHERE itemId IS NOT NULL;
                CREATE INDEX __history_table ON __history (tableName, sequence) WHERE itemId IS NULL;
                """)
    }
}
