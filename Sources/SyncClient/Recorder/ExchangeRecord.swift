import Foundation
import GRDB
import Storage
import SyncProtocol

/// One row of `__exchanges`, the flight recorder's table, and the owner of its schema. A purpose
/// this version does not know, or one missing what it names (a push's operation, a page's number),
/// is ``StoreFailure/Kind/corrupt``, never taken for another.
struct ExchangeRecord: StoreRecord, PersistableRecord {
    static let databaseTableName = "__exchanges"

    /// The columns, as queries name them.
    enum Columns {
        static let id = Column("id")
        static let startedAt = Column("startedAt")
        static let milliseconds = Column("milliseconds")
        static let method = Column("method")
        static let target = Column("target")
        /// What ``ExchangePurpose`` it was, by ``Purpose``; its table and details in the next columns.
        static let purpose = Column("purpose")
        static let tableName = Column("tableName")
        static let itemId = Column("itemId")
        static let operationId = Column("operationId")
        static let queryId = Column("queryId")
        static let page = Column("page")
        static let status = Column("status")
        static let failure = Column("failure")
        static let bytesSent = Column("bytesSent")
        static let bytesReceived = Column("bytesReceived")
        static let requestHeaders = Column("requestHeaders")
        static let responseHeaders = Column("responseHeaders")
        static let requestBody = Column("requestBody")
        static let responseBody = Column("responseBody")
    }

    /// The stored kinds of ``ExchangePurpose``.
    enum Purpose: String {
        case push, pull, verify, doctor
        case probe, reach, bundle
        case epoch, reconcile, escrow, receipt
    }

    /// The exchange the row holds (an id of 0: not stored yet).
    var exchange: RecordedExchange

    func encode(to container: inout PersistenceContainer) {
        let (purpose, itemId, operationId, queryId, page): (Purpose, String?, Int64?, String?, Int?) =
            switch exchange.purpose {
            case .push(let operation, _, let item): (.push, item, operation, nil, nil)
            case .pull(_, let query, let number): (.pull, nil, nil, query, number)
            case .verify(_, let number): (.verify, nil, nil, nil, number)
            case .protocolProbe: (.probe, nil, nil, nil, nil)
            case .reachability: (.reach, nil, nil, nil, nil)
            case .doctor: (.doctor, nil, nil, nil, nil)
            case .supportBundle: (.bundle, nil, nil, nil, nil)
            case .epochProbe: (.epoch, nil, nil, nil, nil)
            case .reconcile(_, let number): (.reconcile, nil, nil, nil, number)
            case .escrow(let number): (.escrow, nil, nil, nil, number)
            case .wipeReceipt: (.receipt, nil, nil, nil, nil)
            }
        container[Columns.id] = exchange.id == 0 ? nil : exchange.id
        container[Columns.startedAt] = Timestamp.string(exchange.startedAt)
        container[Columns.milliseconds] = exchange.milliseconds
        container[Columns.method] = exchange.method
        container[Columns.target] = exchange.target
        container[Columns.purpose] = purpose.rawValue
        container[Columns.tableName] = exchange.purpose.table
        container[Columns.itemId] = itemId
        container[Columns.operationId] = operationId
        container[Columns.queryId] = queryId
        container[Columns.page] = page
        container[Columns.status] = exchange.status
        container[Columns.failure] = exchange.failure
        container[Columns.bytesSent] = exchange.bytesSent
        container[Columns.bytesReceived] = exchange.bytesReceived
        container[Columns.requestHeaders] = exchange.requestHeaders
        container[Columns.responseHeaders] = exchange.responseHeaders
        container[Columns.requestBody] = exchange.requestBody
        container[Columns.responseBody] = exchange.responseBody
    }

    static let migration = StoreMigration("v5-flight-recorder") { db in
        try db.execute(
            sql: """
                CREATE TABLE __exchanges (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    startedAt TEXT NOT NULL,
                    milliseconds REAL NOT NULL,
                    method TEXT NOT NULL,
                    target TEXT NOT NULL,
                    purpose TEXT NOT NULL,
                    tableName TEXT NOT NULL,
                    itemId TEXT,
                    operationId INTEGER,
                    queryId TEXT,
                    page INTEGER,
                    status INTEGER,
                    failure TEXT,
                    bytesSent INTEGER NOT NULL,
                    bytesReceived INTEGER NOT NULL,
                    requestHeaders TEXT NOT NULL,
                    responseHeaders TEXT NOT NULL,
                    requestBody TEXT,
                    responseBody TEXT
                );
                CREATE INDEX __exchanges_item ON __exchanges (itemId) WHERE itemId IS NOT NULL;
                """)
    }
}

extension ExchangeRecord {
    /// Reads a row by column name.
    init(row: Row) throws {
        let table: String = row[Columns.tableName]
        let purpose: ExchangePurpose =
            switch try Self.known(row, Columns.purpose) as Purpose {
            case .push:
                .push(
                    operationId: try Self.required(row, Columns.operationId), table: table,
                    itemId: try Self.required(row, Columns.itemId))
            case .pull: .pull(table: table, queryId: row[Columns.queryId], page: try Self.required(row, Columns.page))
            case .verify: .verify(table: table, page: try Self.required(row, Columns.page))
            case .probe: .protocolProbe(table: table)
            case .reach: .reachability(table: table)
            case .doctor: .doctor(table: table)
            case .bundle: .supportBundle
            case .epoch: .epochProbe(table: table)
            case .reconcile: .reconcile(table: table, page: try Self.required(row, Columns.page))
            case .escrow: .escrow(page: try Self.required(row, Columns.page))
            case .receipt: .wipeReceipt
            }
        exchange = RecordedExchange(
            id: row[Columns.id], startedAt: try Self.time(row, Columns.startedAt),
            milliseconds: row[Columns.milliseconds], method: row[Columns.method], target: row[Columns.target],
            purpose: purpose, status: row[Columns.status], failure: row[Columns.failure],
            bytesSent: row[Columns.bytesSent], bytesReceived: row[Columns.bytesReceived],
            requestHeaders: row[Columns.requestHeaders], responseHeaders: row[Columns.responseHeaders],
            requestBody: row[Columns.requestBody], responseBody: row[Columns.responseBody])
    }
}
