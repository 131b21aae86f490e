import Foundation
import GRDB
import SyncProtocol

extension SyncContext {
    /// Inserts an item locally and queues its insert. Makes a UUID id when the item has none.
    /// Server-owned columns in `item` are ignored. Returns the stored row, on disk when this returns.
    @discardableResult
    nonisolated func insert(_ item: Item, into table: String) throws(SyncError) -> Item {
        try insert([item], into: table)[0]
    }

    /// Inserts items locally and queues their inserts, all in one transaction (one sync of the
    /// disk, however many): every item is stored, or none is. Returns the stored rows in order.
    @discardableResult
    nonisolated func insert(_ items: [Item], into table: String) throws(SyncError) -> [Item] {
        let description = try store.description(of: table)
        var rows: [Item] = []
        for item in items {
            var row = try userValues(item, description)
            row[SystemColumn.id] = .string(try itemId(item) ?? UUID().uuidString.lowercased())
            rows.append(row)
        }
        defer { monitor.noteLocalChange() }
        return try write { [store, queue, rows] db in
            try rows.map { given in
                var row = given
                let id = row[SystemColumn.id]?.stringValue ?? ""
                if try store.readItem(db, table: description, id: id) != nil {
                    throw SyncError.itemExists(table: table, id: id)
                }
                if let queued = try queue.queued(db, table: table, itemId: id), queued.kind == .delete {
                    // Re-created after a queued delete: the server still has it, at the deleted row's version.
                    for column in [SystemColumn.version, SystemColumn.createdAt, SystemColumn.updatedAt] {
                        row[column] = queued.item?[column]
                    }
                }
                try store.writeItem(db, table: description, item: row)
                try queue.enqueue(db, kind: .insert, table: table, itemId: id, before: nil, after: row)
                return try store.readItem(db, table: description, id: id) ?? row
            }
        }
    }

    /// Changes an item locally (the given columns; others keep their values) and queues its update.
    /// The row keeps its `version`. An id with no local row creates it (upsert). Returns the stored row.
    @discardableResult
    nonisolated func update(_ item: Item, in table: String) throws(SyncError) -> Item {
        let description = try store.description(of: table)
        guard let id = try itemId(item) else { throw .invalidItem("an update needs the item's id") }
        let values = try userValues(item, description)
        defer { monitor.noteLocalChange() }
        return try write { [store, queue] db in
            let before = try store.readItem(db, table: description, id: id)
            if before == nil, let queued = try queue.queued(db, table: table, itemId: id), queued.kind == .delete {
                throw SyncError.changeNotAllowed(table: table, id: id, queued: .delete, new: .update)
            }
            var row = before ?? [SystemColumn.id: .string(id)]
            for (key, value) in values { row[key] = value }
            try store.writeItem(db, table: description, item: row)
            try queue.enqueue(db, kind: .update, table: table, itemId: id, before: before, after: row)
            return try store.readItem(db, table: description, id: id) ?? row
        }
    }

    /// Deletes an item locally and queues its delete (the operation keeps a snapshot of the row).
    nonisolated func delete(id: String, from table: String) throws(SyncError) {
        let description = try store.description(of: table)
        defer { monitor.noteLocalChange() }
        try write { [store, queue] db in
            guard let before = try store.readItem(db, table: description, id: id) else {
                throw SyncError.itemNotFound(table: table, id: id)
            }
            try store.deleteItem(db, table: table, id: id)
            try queue.enqueue(db, kind: .delete, table: table, itemId: id, before: before, after: nil)
        }
    }

    /// One element after each local insert, edit or delete (several in a row may come as one):
    /// what auto-sync listens to. Ends when the context closes.
    public nonisolated func localChanges() -> AsyncStream<Void> { monitor.localChanges() }

    /// One element after each commit of the store in this process, whoever made it (a pull, a push,
    /// a local edit, a conflict decision), naming the tables it wrote: what open pages follow.
    /// Ends when the context closes.
    public nonisolated func storeChanges() -> AsyncStream<StoreChange> { store.changes.changes() }

    /// The revision of the latest commit (see ``StoreChange/revision``); 0 before the first.
    public nonisolated var storeRevision: UInt64 { store.changes.revision }

    /// The local row with this id.
    nonisolated func item(id: String, in table: String) throws(SyncError) -> Item? {
        let description = try store.description(of: table)
        return try read { [store] db in try store.readItem(db, table: description, id: id) }
    }

    /// Local rows matching the query, in its order (insertion order when it has none).
    nonisolated func query(_ query: TableQuery, in table: String) throws(SyncError) -> [Item] {
        let description = try store.description(of: table)
        let (filter, arguments) = try query.sqlWhere(description)
        let sql =
            "SELECT \(description.selectList) FROM \(table.quotedSQLName)\(filter)"
            + (try query.sqlOrder(description))
            + query.sqlLimit()
        return try read { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)).map {
                LocalStore.item(from: $0, table: description)
            }
        }
    }

    /// How many local rows match the query (its limit and offset ignored).
    nonisolated func count(_ query: TableQuery, in table: String) throws(SyncError) -> Int {
        let description = try store.description(of: table)
        let (filter, arguments) = try query.sqlWhere(description)
        return try read { db in
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM \(table.quotedSQLName)\(filter)"),
                arguments: StatementArguments(arguments)) ?? 0
        }
    }

    private nonisolated func itemId(_ item: Item) throws(SyncError) -> String? {
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
    private nonisolated func userValues(_ item: Item, _ table: TableDescription) throws(SyncError) -> Item {
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
