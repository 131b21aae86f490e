import Foundation
import GRDB
import Storage
import SyncProtocol
import Synchronization

/// The flight recorder: every exchange the client makes with the service, kept in the store
/// (`__exchanges`), the newest ``retention(_:)`` of them (5,000 unless the store says otherwise),
/// across restarts. The one owner of that table's reads and writes.
///
/// The transport hands each exchange over when it ends (``record(_:)``) as a trace; the trace is
/// redacted and written out by the transaction that stores it. They are written in batches, by
/// ``flush()`` when a push or pull ends or as soon as ``batch`` wait: recording costs an insert
/// inside a transaction of many, never a transaction or a redaction on the way of a request, and a
/// failed write of the recorder never fails a sync.
final class FlightRecorder: Sendable {
    /// Exchanges that wait in memory before a write is started without waiting for the job's end.
    static let batch = 256

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

    private let store: LocalStore
    private let waiting = Mutex<[ExchangeTrace]>([])

    init(store: LocalStore) {
        self.store = store
    }

    /// Keeps `exchange` (written by the next ``flush()``).
    func record(_ exchange: ExchangeTrace) {
        let full = waiting.withLock { waiting in
            waiting.append(exchange)
            return waiting.count == Self.batch
        }
        if full { Task { await flush() } }
    }

    /// Writes the exchanges waiting in memory, in the order they ended, and drops the oldest beyond
    /// the retention. A failure loses them (it is reported nowhere: the sync goes on).
    func flush() async {
        _ = try? await store.asyncWrite { [self] db in try write(db) }
    }

    /// ``flush()`` from a synchronous caller (closing the store).
    func flushNow() {
        _ = try? store.write { db in try write(db) }
    }

    /// Takes the waiting exchanges inside the transaction, so that writes keep their order.
    private func write(_ db: Database) throws {
        let exchanges = waiting.withLock { waiting in
            defer { waiting.removeAll(keepingCapacity: true) }
            return waiting
        }
        guard !exchanges.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO __exchanges (startedAt, milliseconds, method, target, purpose, tableName, itemId,
                    operationId, queryId, page, status, failure, bytesSent, bytesReceived, requestHeaders,
                    responseHeaders, requestBody, responseBody)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for trace in exchanges {
            let exchange = trace.recorded
            let (kind, itemId, operationId, queryId, page): (String, String?, Int64?, String?, Int?) =
                switch exchange.purpose {
                case .push(let operation, _, let item): ("push", item, operation, nil, nil)
                case .pull(_, let query, let number): ("pull", nil, nil, query, number)
                case .verify(_, let number): ("verify", nil, nil, nil, number)
                case .protocolProbe: ("probe", nil, nil, nil, nil)
                case .reachability: ("reach", nil, nil, nil, nil)
                case .doctor: ("doctor", nil, nil, nil, nil)
                }
            try statement.execute(arguments: [
                Timestamp.string(exchange.startedAt), exchange.milliseconds, exchange.method, exchange.target, kind,
                exchange.purpose.table, itemId, operationId, queryId, page, exchange.status, exchange.failure,
                exchange.bytesSent, exchange.bytesReceived, exchange.requestHeaders, exchange.responseHeaders,
                exchange.requestBody, exchange.responseBody,
            ])
        }
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    // MARK: Reading

    /// The newest exchanges kept: 5,000 unless the store says otherwise.
    static let retention = Retention(
        table: "__exchanges", order: "id", key: "recorderRetention", fallback: 5_000)

    /// How many exchanges are kept.
    func retention(_ db: Database) throws -> Int { try Self.retention.count(db) }

    /// Keeps the newest `count` exchanges from now on (and drops older ones at once).
    func setRetention(_ db: Database, _ count: Int) throws { try Self.retention.set(db, count) }

    /// The exchanges matching `query`, newest first, one page (keyset paging on the id).
    func page(_ db: Database, _ query: ExchangeQuery) throws -> ExchangePage {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let status = query.status {
            if status == "failed" {
                conditions.append("status IS NULL")
            } else if status.hasSuffix("xx"), let digit = Int(status.prefix(1)) {
                conditions.append("status BETWEEN ? AND ?")
                arguments += [digit * 100, digit * 100 + 99]
            } else if let code = Int(status) {
                conditions.append("status = ?")
                arguments.append(code)
            }
        }
        if let table = query.table {
            conditions.append("tableName = ?")
            arguments.append(table)
        }
        if let itemId = query.itemId {
            // Its pushes, and the pages (pull, verify) whose answer holds it.
            conditions.append(#"(itemId = ? OR (purpose <> 'push' AND instr(responseBody, ?) > 0))"#)
            arguments += [itemId, #""id":"# + JSONValue.string(itemId).jsonText]
        }
        if let before = query.before {
            conditions.append("id < ?")
            arguments.append(before)
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        arguments.append(query.limit + 1)
        var exchanges = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM __exchanges\(filter) ORDER BY id DESC LIMIT ?"),
            arguments: StatementArguments(arguments)
        ).map(Self.exchange)
        var next: Int64?
        if exchanges.count > query.limit {
            exchanges.removeLast()
            next = exchanges.last?.id
        }
        return ExchangePage(exchanges: exchanges, next: next)
    }

    private static func exchange(_ row: Row) throws -> RecordedExchange {
        let table: String = row["tableName"]
        let purpose: ExchangePurpose
        switch row["purpose"] as String? {
        case "push": purpose = .push(operationId: row["operationId"] ?? 0, table: table, itemId: row["itemId"] ?? "")
        case "verify": purpose = .verify(table: table, page: row["page"] ?? 0)
        case "probe": purpose = .protocolProbe(table: table)
        case "reach": purpose = .reachability(table: table)
        case "doctor": purpose = .doctor(table: table)
        case "pull": purpose = .pull(table: table, queryId: row["queryId"], page: row["page"] ?? 0)
        case let other: throw StoredValue.corrupt("__exchanges", "purpose", other)
        }
        return RecordedExchange(
            id: row["id"], startedAt: try StoredValue.time(row, "startedAt", of: "__exchanges"),
            milliseconds: row["milliseconds"], method: row["method"], target: row["target"], purpose: purpose,
            status: row["status"], failure: row["failure"], bytesSent: row["bytesSent"],
            bytesReceived: row["bytesReceived"], requestHeaders: row["requestHeaders"],
            responseHeaders: row["responseHeaders"], requestBody: row["requestBody"], responseBody: row["responseBody"])
    }
}
