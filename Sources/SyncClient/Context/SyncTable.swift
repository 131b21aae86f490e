import Foundation
import GRDB
import SyncProtocol

/// One synced table of a ``SyncContext``: local reads and writes, pull and purge.
///
/// Writes change only the local store and the queue; ``SyncContext/push()`` sends them.
public struct SyncTable: Sendable {
    /// The context owning the store.
    public let context: SyncContext
    /// The table's name.
    public let name: String

    /// Inserts an item locally and queues its insert. Makes a UUID id when the item has none.
    /// Server-owned columns in `item` are ignored. Returns the stored row, on disk when this returns.
    @discardableResult
    public func insert(_ item: Item) async throws(SyncError) -> Item { try await insert([item])[0] }

    /// Inserts items locally and queues their inserts, all in one transaction (one sync of the
    /// disk, however many): every item is stored, or none is. Returns the stored rows in order.
    @discardableResult
    public func insert(_ items: [Item]) async throws(SyncError) -> [Item] {
        let description = try context.store.description(of: name)
        var rows: [Item] = []
        for item in items {
            var row = try userValues(item, description)
            row[SystemColumn.id] = .string(try itemId(item) ?? UUID().uuidString.lowercased())
            rows.append(row)
        }
        return try await context.store.writeLocalEdit { [store = context.store, queue = context.queue, rows, name] db in
            try rows.map { given in
                var row = given
                let id = row[SystemColumn.id]?.stringValue ?? ""
                if try store.readItem(db, table: description, id: id) != nil {
                    throw SyncError.itemExists(table: name, id: id)
                }
                if let queued = try queue.queued(db, table: name, itemId: id), queued.kind == .delete {
                    // Re-created after a queued delete: the server still has it, at the deleted row's version.
                    for column in [SystemColumn.version, SystemColumn.createdAt, SystemColumn.updatedAt] {
                        row[column] = queued.item?[column]
                    }
                }
                try store.writeItem(db, table: description, item: row)
                try queue.enqueue(db, kind: .insert, table: name, itemId: id, before: nil, after: row)
                return try store.readItem(db, table: description, id: id) ?? row
            }
        }
    }

    /// Changes an item locally (the given columns; others keep their values) and queues its update.
    /// The row keeps its `version`. An id with no local row creates it (upsert). Returns the stored row.
    @discardableResult
    public func update(_ item: Item) async throws(SyncError) -> Item {
        let description = try context.store.description(of: name)
        guard let id = try itemId(item) else { throw .invalidItem("an update needs the item's id") }
        let values = try userValues(item, description)
        return try await context.store.writeLocalEdit { [store = context.store, queue = context.queue, name] db in
            let before = try store.readItem(db, table: description, id: id)
            if before == nil, let queued = try queue.queued(db, table: name, itemId: id), queued.kind == .delete {
                throw SyncError.changeNotAllowed(table: name, id: id, queued: .delete, new: .update)
            }
            var row = before ?? [SystemColumn.id: .string(id)]
            for (key, value) in values { row[key] = value }
            try store.writeItem(db, table: description, item: row)
            try queue.enqueue(db, kind: .update, table: name, itemId: id, before: before, after: row)
            return try store.readItem(db, table: description, id: id) ?? row
        }
    }

    /// Deletes an item locally and queues its delete (the operation keeps a snapshot of the row).
    public func delete(id: String) async throws(SyncError) {
        let description = try context.store.description(of: name)
        try await context.store.writeLocalEdit { [store = context.store, queue = context.queue, name] db in
            guard let before = try store.readItem(db, table: description, id: id) else {
                throw SyncError.itemNotFound(table: name, id: id)
            }
            try store.deleteItem(db, table: name, id: id)
            try queue.enqueue(db, kind: .delete, table: name, itemId: id, before: before, after: nil)
        }
    }

    /// The local row with this id.
    public func item(id: String) throws(SyncError) -> Item? {
        let description = try context.store.description(of: name)
        return try context.read { [store = context.store] db in try store.readItem(db, table: description, id: id) }
    }

    /// Local rows matching the query, in its order (insertion order when it has none).
    public func query(_ query: TableQuery = .all) throws(SyncError) -> [Item] {
        let description = try context.store.description(of: name)
        let (filter, arguments) = try query.sqlWhere(description)
        let sql =
            "SELECT \(description.selectList) FROM \(name.quotedSQLName)\(filter)"
            + (try query.sqlOrder(description))
            + query.sqlLimit()
        return try context.read { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)).map {
                LocalStore.item(from: $0, table: description)
            }
        }
    }

    /// How many local rows match the query (its limit and offset ignored).
    public func count(_ query: TableQuery = .all) throws(SyncError) -> Int {
        let description = try context.store.description(of: name)
        let (filter, arguments) = try query.sqlWhere(description)
        return try context.read { db in
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM \(name.quotedSQLName)\(filter)"),
                arguments: StatementArguments(arguments)) ?? 0
        }
    }

    /// Why the row with this id is as it is: every kept event that touched it, oldest first (local
    /// edits, push outcomes, conflicts, decisions, the pull pages that brought it, purges, token
    /// resets and remote switches), and one sentence about its state now. Read in one transaction;
    /// never writes.
    public func history(id itemId: String) throws(SyncError) -> ItemHistory {
        let description = try context.store.description(of: name)
        return try context.read { [store = context.store, queue = context.queue, name] db in
            let queued = try queue.operations(db, table: name, itemId: itemId)
            // A held operation explains the row first: the item's later ones wait behind it.
            let operation = queued.first(where: \.isHeld) ?? queued.last
            let now = RowExplanation.Now(
                row: try store.readItem(db, table: description, id: itemId), operation: operation,
                error: try operation.flatMap { try queue.error(db, operationId: $0.id) },
                retention: try HistoryLog.retention.count(db))
            let events = try queue.history.events(db, table: name, itemId: itemId)
            return ItemHistory(
                table: name, itemId: itemId, explanation: RowExplanation.sentence(now, events: events),
                events: events, row: now.row, operation: operation)
        }
    }

    /// Pulls the server's rows (see ``SyncContext/pull(_:query:queryId:settings:)``).
    @discardableResult
    public func pull(
        query: TableQuery? = nil, queryId: String? = nil, settings: PullSettings = PullSettings()
    )
        async throws -> PullResult
    {
        try await context.pull(name, query: query, queryId: queryId, settings: settings)
    }

    /// Removes local rows matching `query` (all rows when nil) and the table's delta tokens.
    /// Refused while the table has queued operations, unless `force`, which drops them with their errors.
    @discardableResult
    public func purge(query: TableQuery? = nil, force: Bool = false) async throws(SyncError) -> Int {
        let description = try context.store.description(of: name)
        let (filter, arguments) = try (query ?? .all).sqlWhere(description)
        return try await context.write { [queue = context.queue, store = context.store, name] db in
            let queued = try queue.count(db, table: name)
            if queued > 0 {
                guard force else { throw SyncError.pendingOperations(table: name, count: queued) }
                try queue.removeAll(db, table: name)
            }
            try db.execute(sql: "DELETE FROM \(name.quotedSQLName)\(filter)", arguments: StatementArguments(arguments))
            let removed = db.changesCount
            try store.removeDeltaTokens(db, table: name)
            try queue.history.recordTableEvent(
                db, .purged, table: name,
                detail: "\(removed) local rows removed" + (query == nil ? "" : " (those matching a query)")
                    + (queued > 0 ? ", \(queued) queued changes dropped" : ""))
            return removed
        }
    }

    /// This table's queued operations in push order.
    public func operations() throws(SyncError) -> [TableOperation] { try context.operations.all(table: name) }

    private func itemId(_ item: Item) throws(SyncError) -> String? {
        switch item[SystemColumn.id] {
        case nil, .null?: return nil
        case .string(let id)?:
            guard !id.isEmpty else { throw .invalidItem("an id must not be empty") }
            return id
        case .number(let number)?: return JSONValue.number(number).description
        default: throw .invalidItem("an id must be a string")
        }
    }

    /// The item's user columns (server-owned columns dropped); a member the table has no column for
    /// is kept, and the write adds its column (as the service's dynamic schema does).
    private func userValues(_ item: Item, _ table: TableDescription) throws(SyncError) -> Item {
        var values: Item = [:]
        for (name, value) in item where !SystemColumn.all.contains(name) {
            guard name != TableDescription.mismatchesColumn else {
                throw .invalidItem("'\(name)' is the store's own column; name the field otherwise")
            }
            values[name] = value
        }
        return values
    }
}
