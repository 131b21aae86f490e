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
        /// The item's first operation when it is not this one: this one waits behind it.
        public var earlier: TableOperation?
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
        func fetch(_ bound: String?, _ id: Int64?, ascending: Bool, limit: Int) throws -> [TableOperation] {
            var request = OperationRecord.order(ascending ? Columns.id.asc : Columns.id.desc).limit(limit)
            if let bound, let id { request = request.filter(bound == "<" ? Columns.id < id : Columns.id > id) }
            return try request.fetchAll(db).map(\.operation)
        }
        let pager = KeysetPager<TableOperation>(
            ascending: true, fetch: { try fetch($0, $1, ascending: $2, limit: $3) }, key: \.id)
        let cursor: KeysetPager<TableOperation>.Position =
            switch position {
            case .first: .first
            case .after(let id): .following(id)
            case .before(let id): .preceding(id)
            case .last: .last
            }
        let (operations, hasEarlier, hasLater) = try pager.page(cursor, limit: limit)
        let entries = try operations.map { operation in
            let table = store.tables[operation.table]
            let first = try OperationRecord.filter(
                Columns.tableName == operation.table && Columns.itemId == operation.itemId
            ).order(Columns.id).fetchOne(db)?.operation
            return QueuePage.Entry(
                operation: operation,
                localItem: try table.flatMap { try store.readItem(db, table: $0, id: operation.itemId) },
                earlier: first?.id == operation.id ? nil : first)
        }
        return QueuePage(entries: entries, hasEarlier: hasEarlier, hasLater: hasLater, total: try count(db))
    }
}
