import Foundation
import GRDB
import SyncProtocol
import Synchronization

/// The flight recorder: every exchange the client makes with the service, kept in the store
/// (`__exchanges`), the newest ``retention`` of them (5,000 unless the store says otherwise),
/// across restarts. The one code that reads and writes that table, whose rows and schema are
/// ``ExchangeRecord``.
///
/// The transport hands each exchange over when it ends (``record(_:)``), still to be redacted; it is
/// redacted and written out by the transaction that stores it (an ``ExchangeRecord``). They are written in batches, by
/// ``flush()`` when a push or pull ends or as soon as ``batch`` wait: recording costs an insert
/// inside a transaction of many, never a transaction or a redaction on the way of a request, and a
/// failed write of the recorder never fails a sync.
final class FlightRecorder: Sendable {
    /// Exchanges that wait in memory before a write is started without waiting for the job's end.
    static let batch = 256

    private let store: LocalStore
    private let waiting = Mutex<[@Sendable () -> RecordedExchange]>([])

    init(store: LocalStore) {
        self.store = store
    }

    /// Keeps `exchange` (written by the next ``flush()``): the transport hands it over unredacted,
    /// and it is redacted and cut on the store's writer queue, never on the way of a request.
    func record(_ exchange: @escaping @Sendable () -> RecordedExchange) {
        let full = waiting.withLock { waiting in
            waiting.append(exchange)
            return waiting.count == Self.batch
        }
        // `record` is on a request's way and must not wait for the write, which nobody awaits (the
        // end of the sync flushes what is left): queued on the store's writer, with no task.
        if full { store.pool.asyncWrite({ [self] db in try write(db) }, completion: { _, _ in }) }
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
        for exchange in exchanges { try ExchangeRecord(exchange: exchange()).insert(db) }
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    // MARK: Reading

    /// The newest exchanges kept: 5,000 unless the store says otherwise.
    static let retention = Retention(
        table: ExchangeRecord.databaseTableName, order: "id", key: "recorderRetention", fallback: 5_000)

    /// The exchanges matching `query`, newest first, one page (keyset paging on the id).
    func page(_ db: Database, _ query: ExchangeQuery) throws -> ExchangePage {
        typealias Columns = ExchangeRecord.Columns
        var request = ExchangeRecord.order(Columns.id.desc).limit(query.limit + 1)
        if let status = query.status {
            if status == "failed" {
                request = request.filter(Columns.status == nil)
            } else if status.hasSuffix("xx"), let digit = Int(status.prefix(1)) {
                request = request.filter((digit * 100...digit * 100 + 99).contains(Columns.status))
            } else if let code = Int(status) {
                request = request.filter(Columns.status == code)
            }
        }
        if let table = query.table { request = request.filter(Columns.tableName == table) }
        if let itemId = query.itemId {
            // Its pushes, and the pages (pull, verify) whose answer holds it.
            let needle = #""id":"# + JSONValue.string(itemId).jsonText
            request = request.filter(
                Columns.itemId == itemId
                    || (Columns.purpose != ExchangeRecord.Purpose.push.rawValue
                        && SQL("instr(\(Columns.responseBody), \(needle)) > 0"))
            )
        }
        if let before = query.before { request = request.filter(Columns.id < before) }
        let (exchanges, next) = try request.fetchAll(db).map(\.exchange).keysetPage(limit: query.limit, key: \.id)
        return ExchangePage(exchanges: exchanges, next: next)
    }
}
