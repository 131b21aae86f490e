import SyncProtocol

/// One synced table of a ``SyncContext``: local reads and writes, pull and purge.
///
/// Writes change only the local store and the queue; ``SyncContext/push()`` sends them.
public struct SyncTable: Sendable {
    /// The context owning the store.
    public let context: SyncContext
    /// The table's name.
    public let name: String

    /// Inserts an item (a UUID id is made when it has none) and queues its insert.
    @discardableResult
    public func insert(_ item: Item) throws(SyncError) -> Item { try context.insert(item, into: name) }

    /// Inserts items in one transaction (all or none) and queues their inserts.
    @discardableResult
    public func insert(_ items: [Item]) throws(SyncError) -> [Item] { try context.insert(items, into: name) }

    /// Changes the given columns of the item with `item["id"]` and queues its update.
    @discardableResult
    public func update(_ item: Item) throws(SyncError) -> Item { try context.update(item, in: name) }

    /// Deletes the item and queues its delete.
    public func delete(id: String) throws(SyncError) { try context.delete(id: id, from: name) }

    /// The local row with this id.
    public func item(id: String) throws(SyncError) -> Item? { try context.item(id: id, in: name) }

    /// Why the row with this id is as it is (see ``SyncContext/history(of:in:)``).
    public func history(id: String) throws(SyncError) -> ItemHistory { try context.history(of: id, in: name) }

    /// Local rows matching the query (filter, sort, limit/offset).
    public func query(_ query: TableQuery = .all) throws(SyncError) -> [Item] { try context.query(query, in: name) }

    /// How many local rows match.
    public func count(_ query: TableQuery = .all) throws(SyncError) -> Int { try context.count(query, in: name) }

    /// Pulls the server's rows (see ``SyncContext/pull(_:query:queryId:settings:)``).
    @discardableResult
    public func pull(
        query: TableQuery? = nil, queryId: String? = nil, settings: PullSettings = PullSettings()
    )
        async throws -> PullResult
    {
        try await context.pull(name, query: query, queryId: queryId, settings: settings)
    }

    /// Removes local rows (see ``SyncContext/purge(_:query:force:)``).
    @discardableResult
    public func purge(query: TableQuery? = nil, force: Bool = false) throws(SyncError) -> Int {
        try context.purge(name, query: query, force: force)
    }

    /// This table's queued operations in push order.
    public func operations() throws(SyncError) -> [TableOperation] { try context.operations.all(table: name) }
}
