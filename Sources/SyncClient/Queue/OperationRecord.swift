import Foundation
import GRDB
import SyncProtocol

/// One row of `__operations`, the queue's table, read by column name (never by position); a value
/// this version does not know is ``StoreFailure/Kind/corrupt`` (see ``StoredValue``), never pushed
/// as something else.
struct OperationRecord: FetchableRecord {
    /// The table's name.
    static let table = "__operations"

    /// The columns, as queries name them.
    enum Columns {
        static let id = "id"
        static let tableName = "tableName"
        static let itemId = "itemId"
        static let kind = "kind"
        static let state = "state"
        static let item = "item"
        static let base = "base"
        static let attempts = "attempts"
        static let queuedAt = "queuedAt"
        static let lastAttemptAt = "lastAttemptAt"
        static let lastStatus = "lastStatus"
        static let message = "message"
        static let recreate = "recreate"
        static let heldAt = "heldAt"
        static let heldReason = "heldReason"
        static let changedColumns = "changedColumns"
    }

    /// The select list of a whole operation.
    static let selection = [
        Columns.id, Columns.tableName, Columns.itemId, Columns.kind, Columns.state, Columns.item, Columns.base,
        Columns.attempts, Columns.queuedAt, Columns.lastAttemptAt, Columns.lastStatus, Columns.message,
        Columns.recreate, Columns.heldAt, Columns.heldReason, Columns.changedColumns,
    ].joined(separator: ", ")

    /// The operation the row holds.
    let operation: TableOperation

    init(row: Row) throws {
        operation = TableOperation(
            id: row[Columns.id], table: row[Columns.tableName], itemId: row[Columns.itemId],
            kind: try Self.known(row, Columns.kind), state: try Self.known(row, Columns.state),
            item: ItemCoding.decode(row[Columns.item]), base: ItemCoding.decode(row[Columns.base]),
            attempts: row[Columns.attempts], queuedAt: try StoredValue.time(row, Columns.queuedAt, of: Self.table),
            lastAttemptAt: try StoredValue.time(row, Columns.lastAttemptAt, of: Self.table),
            lastStatus: row[Columns.lastStatus], message: row[Columns.message], recreate: row[Columns.recreate],
            hold: try (StoredValue.time(row, Columns.heldAt, of: Self.table) as Date?).map {
                OperationHold(since: $0, reason: row[Columns.heldReason])
            },
            changedColumns: SyncOperationQueue.decodeColumns(row[Columns.changedColumns]))
    }

    /// The value of `column` as one of `Value`'s cases (see ``StoredValue``).
    static func known<Value: RawRepresentable<String>>(_ row: Row, _ column: String) throws -> Value {
        try StoredValue.known(row, column, of: table)
    }
}

extension SyncOperationQueue {
    /// The operations `sql` selects (with ``OperationRecord/selection``).
    func fetchOperations(_ db: Database, _ sql: String, _ arguments: StatementArguments = []) throws -> [TableOperation]
    {
        try OperationRecord.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map(\.operation)
    }
}
