import GRDB
import SyncProtocol

/// Where a page of the queue starts, in push order.
public enum QueuePosition: Sendable, Hashable {
    /// The operations pushed first.
    case first
    /// The operations queued after the one with this id (the next page).
    case after(Int64)
    /// The operations queued before the one with this id (the previous page).
    case before(Int64)
    /// The operations pushed last.
    case last
}

/// One page of the queue, read in one read transaction with each operation's local row.
public struct QueuePage: Sendable {
    /// One queued operation and the local row it changes (nil once deleted here).
    public struct Entry: Sendable {
        public var operation: TableOperation
        public var localItem: Item?
    }

    public var entries: [Entry]
    /// Whether operations are queued before and after this page.
    public var hasEarlier: Bool
    public var hasLater: Bool
    /// How many operations are queued in all.
    public var total: Int
}

extension SyncOperationQueue {
    /// A page of at most `limit` operations in push order, cut by operation id (no OFFSET), so a
    /// page costs the same wherever it is in a long queue.
    func page(_ db: Database, _ position: QueuePosition, limit: Int) throws -> QueuePage {
        func fetch(_ condition: String?, _ id: Int64?, ascending: Bool, limit: Int) throws -> [TableOperation] {
            let sql =
                "SELECT \(Self.columns) FROM __operations" + (condition.map { " WHERE id \($0) ?" } ?? "")
                + " ORDER BY id \(ascending ? "ASC" : "DESC") LIMIT \(limit)"
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(id.map { [$0] } ?? []))
                .map(Self.operation)
        }
        var operations: [TableOperation]
        var hasEarlier = false
        var hasLater = false
        switch position {
        case .first:
            operations = try fetch(nil, nil, ascending: true, limit: limit + 1)
            hasLater = operations.count > limit
            operations = Array(operations.prefix(limit))
        case .after(let id):
            operations = try fetch(">", id, ascending: true, limit: limit + 1)
            hasLater = operations.count > limit
            operations = Array(operations.prefix(limit))
            hasEarlier = try !fetch("<", operations.first?.id ?? id + 1, ascending: false, limit: 1).isEmpty
        case .before(let id):
            operations = try fetch("<", id, ascending: false, limit: limit + 1)
            hasEarlier = operations.count > limit
            operations = Array(operations.prefix(limit).reversed())
            hasLater = try !fetch(">", operations.last?.id ?? id - 1, ascending: true, limit: 1).isEmpty
        case .last:
            operations = try fetch(nil, nil, ascending: false, limit: limit + 1)
            hasEarlier = operations.count > limit
            operations = Array(operations.prefix(limit).reversed())
        }
        let entries = try operations.map { operation in
            let table = store.tables[operation.table]
            return QueuePage.Entry(
                operation: operation,
                localItem: try table.flatMap { try store.readItem(db, table: $0, id: operation.itemId) })
        }
        return QueuePage(entries: entries, hasEarlier: hasEarlier, hasLater: hasLater, total: try count(db))
    }
}

extension SyncContext {
    /// One page of the queue in push order with each operation's local row (at most `limit`).
    public nonisolated func operationsPage(_ position: QueuePosition, limit: Int = 100) throws(SyncError) -> QueuePage {
        try read { [queue] db in try queue.page(db, position, limit: max(1, limit)) }
    }
}
