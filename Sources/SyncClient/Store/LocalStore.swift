import Foundation
import GRDB
import Storage
import SyncProtocol

/// The SQLite file: one data table per described table, plus `__config`, and the store's own tables,
/// each read and written by one type through its record (the queue's `__operations` and `__errors`
/// by ``SyncOperationQueue``, the journal, the history, the flight recorder's exchanges).
/// Every method that takes a `Database` runs inside the caller's transaction.
struct LocalStore: Sendable {
    let pool: DatabasePool
    /// The tables, their columns' types, page layouts and list indexes, as they are now.
    let catalog = TableCatalog()
    /// Catches the list indexes up after pulls.
    let listIndexer: ListIndexer
    /// Tells of each commit, whoever made it.
    let changes = StoreChanges()

    /// The schema's steps, oldest first; a store written by an older todosync is brought up to date.
    /// Each table's steps belong to its owner (``OperationRecord``, ``JournalRecord``...).
    static let migrations: [StoreMigration] =
        [firstSchema, OperationRecord.earlierBodiesMigration]
        + [JournalRecord.migration, HeldDecisionRecord.jsonMigration, HeldDecisionRecord.columnsMigration]
        + [columnsMigration, ExchangeRecord.migration, HistoryRecord.migration, OperationRecord.holdMigration]
        + [OperationRecord.changedColumnsMigration]

    /// The first schema: the queue's tables and `__config`.
    private static let firstSchema = StoreMigration("v1-sync-tables") { db in
        try OperationRecord.create(db)
        try OperationErrorRecord.create(db)
        try db.execute(sql: "CREATE TABLE __config (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    }

    /// Opens the file, applies the migrations and creates (or widens) the data tables: the given
    /// ones and every table the store holds already, each with every column it saved.
    init(path: String, tables: [TableDescription]) throws(SyncError) {
        do {
            // Each commit is something the user or the service was told: on disk before it returns.
            pool = try StoreDatabase.open(at: path, migrations: Self.migrations, durability: .everyCommit)
        } catch {
            throw .storage(StoreFailure(error))
        }
        listIndexer = ListIndexer(catalog: catalog)
        pool.add(transactionObserver: changes, extent: .databaseLifetime)
        let catalog = self.catalog
        let store = self
        try write { db in
            var given = tables
            for name in try Self.savedTables(db) where !given.contains(where: { $0.name == name }) {
                given.append(TableDescription(name: name, columns: []))
            }
            for table in given { try store.describe(db, table, strictName: false) }
        }
        // Rows a pull left uncounted when the process ended, or stored before the index existed.
        for entry in catalog.committed.values { listIndexer.catchUp(entry.listIndex, in: pool) }
    }

    /// Runs `body` in a read transaction; failures become ``SyncError/storage(_:)``.
    func read<T>(_ body: (Database) throws -> T) throws(SyncError) -> T {
        do { return try pool.read(body) } catch { throw SyncError(error) }
    }

    /// Runs `body` in a write transaction; failures become ``SyncError/storage(_:)``.
    func write<T>(_ body: (Database) throws -> T) throws(SyncError) -> T {
        do { return try pool.write(body) } catch { throw SyncError(error) }
    }

    /// Runs `body` in a read transaction on one of GRDB's reader queues while the calling task is
    /// suspended. Failures become ``SyncError/storage(_:)``; in a cancelled task GRDB does not read,
    /// and that is ``StopReason/cancelled``.
    func asyncRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SyncError) -> T {
        do { return try await pool.read(body) } catch { throw SyncError(error) }
    }

    /// A write transaction that queues a local insert, edit or delete (``SyncTable``): when `body`
    /// succeeds its commit is told as a local edit (``StoreChange/isLocalEdit``).
    func writeLocalEdit<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SyncError) -> T {
        try await asyncWrite { [changes] db in
            let value = try body(db)
            changes.markLocalEdit()
            return value
        }
    }

    /// Runs `body` in a write transaction on GRDB's writer queue while the calling task is suspended:
    /// no cooperative thread waits for SQLite. Failures become ``SyncError/storage(_:)``.
    ///
    /// The transaction runs to its end even when the calling task is cancelled (GRDB would not start
    /// it, or would interrupt it): what a sync has received or decided is stored, and callers check
    /// for cancellation between transactions.
    func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SyncError) -> T {
        // GRDB's completion form, awaited through one continuation: it neither checks for
        // cancellation nor interrupts the transaction (its `async` form does, so that one needed a
        // task of its own around it).
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            pool.asyncWrite(body) { _, result in continuation.resume(returning: result) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw SyncError(error)
        }
    }

    // MARK: Rows

    func readItem(_ db: Database, table: TableDescription, id: String) throws -> Item? {
        let table = current(table, in: db)
        let statement = try db.cachedStatement(
            sql: "SELECT \(table.selectList) FROM \(table.name.quotedSQLName) WHERE id = ?")
        guard let row = try Row.fetchOne(statement, arguments: [id]) else { return nil }
        return Self.item(from: row, table: table)
    }

    /// The items of `ids` that have a row, by id.
    func readItems(_ db: Database, table: TableDescription, ids: [String]) throws -> [String: Item] {
        let table = current(table, in: db)
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT \(table.selectList) FROM \(table.name.quotedSQLName) WHERE id IN (\(sqlParameters(ids.count)))"
            ),
            arguments: StatementArguments(positional: ids))
        var items: [String: Item] = [:]
        for row in rows {
            let item = Self.item(from: row, table: table)
            if let id = item[SystemColumn.id]?.stringValue { items[id] = item }
        }
        return items
    }

    /// The item of a row selected with `table.selectList`, read by position (by name is slower).
    /// Values kept because they did not fit their column's type come back exactly as they were.
    static func item(from row: Row, table: TableDescription) -> Item {
        item(table: table) { row[$0] }
    }

    /// The item of the values of `table`'s columns in the order of ``TableDescription/allColumns``
    /// (a row of a pulled page, say).
    static func item(values: [DatabaseValue], table: TableDescription) -> Item {
        item(table: table) { $0 < values.count ? values[$0] : .null }
    }

    private static func item(table: TableDescription, value: (Int) -> DatabaseValue) -> Item {
        var item: Item = [:]
        for (index, column) in table.allColumns.enumerated() {
            let value = value(index)
            if index == TableDescription.mismatchesIndex {
                if case .string(let text) = value.storage, case .object(let kept)? = ItemCoding.value(text) {
                    for (name, value) in kept { item[name] = value }
                }
                continue
            }
            if column.name == SystemColumn.deleted, value.isNull { continue }
            if item[column.name] == nil { item[column.name] = ColumnValue.json(value, as: column.type) }
        }
        return item
    }

    /// Inserts the row, or changes the row with its id in place, with every column of the table
    /// (missing ones become NULL), and brings the counts and search index up to it.
    /// Members the table has no column for add one (see ``widen(_:_:forItems:)``).
    func writeItem(_ db: Database, table: TableDescription, item: Item) throws {
        let table = try widen(db, table.name, forItems: [item])
        let values = ColumnValue.row(item, columns: table.allColumns)
        try db.cachedStatement(sql: table.upsertSQL).execute(arguments: StatementArguments(positional: values))
        try catalog.entry(table.name, for: db)?.listIndex.catchUp(db, limit: Self.catchUpPerEdit)
    }

    /// Rows past the list index's mark that one local write takes in (usually just its own row;
    /// more while the index catches up after a pull).
    static let catchUpPerEdit = 64

    /// Writes the service's copies of items it has just applied, one per item.
    ///
    /// The usual answer holds the values sent with a new version and times: then one `UPDATE` for
    /// them all sets only the system columns of the rows whose user columns still hold those values,
    /// which leaves the search index and the counts alone (rewriting every column re-indexes the
    /// row's text, the larger part of a push's local work). The other rows are written whole.
    func adoptServerItems(_ db: Database, table: TableDescription, items: [Item]) throws {
        guard !items.isEmpty else { return }
        let table = try widen(db, table.name, forItems: items)
        let values = items.flatMap { ColumnValue.row($0, columns: table.allColumns) }
        let adopted = Set(
            try String.fetchAll(
                db.cachedStatement(sql: table.adoptionSQL(rows: items.count)),
                arguments: StatementArguments(positional: values)))
        for item in items where !adopted.contains(item[SystemColumn.id]?.stringValue ?? "") {
            try writeItem(db, table: table, item: item)
        }
    }

    func deleteItem(_ db: Database, table: String, id: String) throws {
        try db.execute(sql: "DELETE FROM \(table.quotedSQLName) WHERE id = ?", arguments: [id])
    }

    // MARK: Config

    func config(_ db: Database, _ key: String) throws -> String? {
        // Cached: read for every conflict (its table's policy) and every pull.
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM __config WHERE key = ?"), arguments: [key])
    }

    /// The value saved under `key` as one of `Value`'s cases (nil: none saved); one this version
    /// does not know is ``StoreFailure/Kind/corrupt``, never taken for the default.
    func config<Value: RawRepresentable<String>>(_ db: Database, _ key: String, as _: Value.Type) throws -> Value? {
        try config(db, key).map { try StoredValue.known($0, Column(key), of: "__config") }
    }

    func setConfig(_ db: Database, _ key: String, _ value: String?) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO __config (key, value) VALUES (?, ?)", arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM __config WHERE key = ?", arguments: [key])
        }
    }
}
