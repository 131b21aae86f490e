import Foundation
import GRDB
import Storage
import SyncProtocol

/// The SQLite file: one data table per described table, plus `__operations`, `__errors` and
/// `__config`. Every method that takes a `Database` runs inside the caller's transaction.
struct LocalStore: Sendable {
    let pool: DatabasePool
    let tables: [String: TableDescription]
    /// Decoders of server items straight into each table's columns.
    let layouts: [String: PageLayout]

    static let migrations: [StoreMigration] = [
        StoreMigration("v1-sync-tables") { db in
            try db.execute(
                sql: """
                    CREATE TABLE __operations (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        tableName TEXT NOT NULL,
                        itemId TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        state TEXT NOT NULL,
                        item TEXT,
                        base TEXT,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        queuedAt TEXT NOT NULL,
                        lastAttemptAt TEXT,
                        lastStatus INTEGER,
                        message TEXT,
                        recreate INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX __operations_item ON __operations (tableName, itemId);
                    CREATE TABLE __errors (
                        operationId INTEGER PRIMARY KEY REFERENCES __operations (id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        status INTEGER,
                        message TEXT NOT NULL,
                        serverItem TEXT,
                        clientItem TEXT,
                        recordedAt TEXT NOT NULL
                    );
                    CREATE TABLE __config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    """)
        }
    ]

    /// Opens the file, applies the migrations and creates (or widens) the data tables.
    init(path: String, tables: [TableDescription]) throws(SyncError) {
        do {
            pool = try StoreDatabase.open(at: path, migrations: Self.migrations)
        } catch {
            throw .storage(error.description)
        }
        var byName: [String: TableDescription] = [:]
        for table in tables { byName[table.name] = table }
        self.tables = byName
        layouts = byName.mapValues(PageLayout.init)
        do {
            try pool.write { db in
                for table in tables { try Self.createTable(table, in: db) }
                // A push interrupted by a crash leaves operations in flight: their outcome is unknown.
                try db.execute(
                    sql: "UPDATE __operations SET state = 'attempted' WHERE state = 'inFlight'")
            }
        } catch {
            throw .storage("\(error)")
        }
    }

    private static func createTable(_ table: TableDescription, in db: Database) throws {
        guard !table.name.hasPrefix("__"), !table.name.isEmpty else {
            throw SyncError.invalidItem("a table name must not be empty or start with __ ('\(table.name)')")
        }
        if try db.tableExists(table.name) {
            let existing = Set(try db.columns(in: table.name).map(\.name))
            for column in table.allColumns where !existing.contains(column.name) {
                try db.execute(
                    sql: "ALTER TABLE \(table.name.quotedDatabaseIdentifier) ADD COLUMN "
                        + "\(column.name.quotedDatabaseIdentifier) \(column.type.sqlType)")
            }
        } else {
            let columns = table.allColumns.map { column in
                column.name == SystemColumn.id
                    ? "\"id\" TEXT PRIMARY KEY NOT NULL"
                    : "\(column.name.quotedDatabaseIdentifier) \(column.type.sqlType)"
            }
            try db.execute(
                sql: "CREATE TABLE \(table.name.quotedDatabaseIdentifier) (\(columns.joined(separator: ", ")))")
            try db.execute(
                sql: "CREATE INDEX \("\(table.name)_updatedAt".quotedDatabaseIdentifier) ON "
                    + "\(table.name.quotedDatabaseIdentifier) (updatedAt, id)")
        }
        // Lists show the newest items first, page by page.
        try db.execute(
            sql: "CREATE INDEX IF NOT EXISTS \("\(table.name)_createdAt".quotedDatabaseIdentifier) ON "
                + "\(table.name.quotedDatabaseIdentifier) (createdAt, id)")
    }

    func description(of table: String) throws(SyncError) -> TableDescription {
        guard let description = tables[table] else { throw .unknownTable(table) }
        return description
    }

    // MARK: Rows

    func readItem(_ db: Database, table: TableDescription, id: String) throws -> Item? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(table.selectList) FROM \(table.name.quotedDatabaseIdentifier) WHERE id = ?")
        guard let row = try Row.fetchOne(statement, arguments: [id]) else { return nil }
        return Self.item(from: row, table: table)
    }

    /// The item of a row selected with `table.selectList`, read by position (by name is slower).
    static func item(from row: Row, table: TableDescription) -> Item {
        var item: Item = [:]
        for (index, column) in table.allColumns.enumerated() {
            let value: DatabaseValue = row[index]
            if column.name == SystemColumn.deleted, value.isNull { continue }
            item[column.name] = ColumnValue.json(value, as: column.type)
        }
        return item
    }

    /// Inserts or replaces the row with every column of the table (missing ones become NULL).
    func writeItem(_ db: Database, table: TableDescription, item: Item) throws {
        let columns = table.allColumns
        let names = columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let values = columns.map { ColumnValue.database(item[$0.name], as: $0.type) }
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO \(table.name.quotedDatabaseIdentifier) (\(names)) VALUES (\(marks))"
        ).execute(arguments: StatementArguments(values))
    }

    /// Inserts or replaces a row given as values in the order of `table.allColumns`.
    func writeRow(_ db: Database, table: TableDescription, values: [DatabaseValue]) throws {
        let columns = table.allColumns
        let names = columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO \(table.name.quotedDatabaseIdentifier) (\(names)) VALUES (\(marks))"
        ).execute(arguments: StatementArguments(values))
    }

    func deleteItem(_ db: Database, table: String, id: String) throws {
        try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?", arguments: [id])
    }

    // MARK: Operations

    /// The columns ``operation(from:)`` reads, by position.
    static let operationColumns =
        "id, tableName, itemId, kind, state, item, base, attempts, queuedAt, lastAttemptAt, lastStatus, message, recreate"

    /// The operation of a row selected with ``operationColumns``.
    static func operation(from row: Row) -> TableOperation {
        TableOperation(
            id: row[0], table: row[1], itemId: row[2], kind: OperationKind(rawValue: row[3]) ?? .update,
            state: OperationState(rawValue: row[4]) ?? .pending, item: ItemCoding.decode(row[5]),
            base: ItemCoding.decode(row[6]), attempts: row[7],
            queuedAt: Timestamp.date(row[8]) ?? Date(timeIntervalSince1970: 0), lastAttemptAt: Timestamp.date(row[9]),
            lastStatus: row[10], message: row[11], recreate: row[12])
    }

    func operation(_ db: Database, id: Int64) throws -> TableOperation? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(Self.operationColumns) FROM __operations WHERE id = ?"), arguments: [id]
        )
        .map(Self.operation)
    }

    /// The operation, or ``SyncError/operationNotFound(_:)``.
    func existingOperation(_ db: Database, id: Int64) throws -> TableOperation {
        guard let operation = try operation(db, id: id) else { throw SyncError.operationNotFound(id) }
        return operation
    }

    /// The item's operations in push order.
    func operations(_ db: Database, table: String, itemId: String) throws -> [TableOperation] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT \(Self.operationColumns) FROM __operations WHERE tableName = ? AND itemId = ? ORDER BY id
                    """),
            arguments: [table, itemId]
        ).map(Self.operation)
    }

    /// Summaries of the operations of several items, in push order.
    func operationSummaries(_ db: Database, table: String, itemIds: [String]) throws -> [OperationSummary] {
        guard !itemIds.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: itemIds.count).joined(separator: ", ")
        return try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT id, itemId, kind, state FROM __operations
                    WHERE tableName = ? AND itemId IN (\(placeholders)) ORDER BY id
                    """),
            arguments: StatementArguments([table] + itemIds)
        ).map { row in
            OperationSummary(
                id: row[0], itemId: row[1], kind: OperationKind(rawValue: row[2]) ?? .update,
                state: OperationState(rawValue: row[3]) ?? .pending)
        }
    }

    /// Table, item and kind of an operation, without decoding its items.
    func operationHeader(_ db: Database, id: Int64) throws -> (table: String, itemId: String, kind: OperationKind)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT tableName, itemId, kind FROM __operations WHERE id = ?"),
                arguments: [id])
        else { return nil }
        return (row[0], row[1], OperationKind(rawValue: row[2]) ?? .update)
    }

    /// The id of the item's first queued operation (the one push may send).
    func firstOperationId(_ db: Database, table: String, itemId: String) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT min(id) FROM __operations WHERE tableName = ? AND itemId = ?"),
            arguments: [table, itemId])
    }

    /// Whether the item has operations queued after `id`.
    func hasOperations(_ db: Database, table: String, itemId: String, after id: Int64) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM __operations WHERE tableName = ? AND itemId = ? AND id > ?)"),
            arguments: [table, itemId, id]) ?? false
    }

    func allOperations(_ db: Database, table: String? = nil) throws -> [TableOperation] {
        if let table {
            return try Row.fetchAll(
                db, sql: "SELECT \(Self.operationColumns) FROM __operations WHERE tableName = ? ORDER BY id",
                arguments: [table]
            ).map(Self.operation)
        }
        return try Row.fetchAll(db, sql: "SELECT \(Self.operationColumns) FROM __operations ORDER BY id").map(
            Self.operation)
    }

    @discardableResult
    func insertOperation(_ db: Database, _ operation: TableOperation) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO __operations
                    (tableName, itemId, kind, state, item, base, attempts, queuedAt, lastAttemptAt, lastStatus, message, recreate)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                operation.table, operation.itemId, operation.kind.rawValue, operation.state.rawValue,
                ItemCoding.encode(operation.item), ItemCoding.encode(operation.base), operation.attempts,
                Timestamp.string(operation.queuedAt), operation.lastAttemptAt.map(Timestamp.string),
                operation.lastStatus, operation.message, operation.recreate,
            ])
        return db.lastInsertedRowID
    }

    func updateOperation(_ db: Database, _ operation: TableOperation) throws {
        try db.cachedStatement(
            sql: """
                UPDATE __operations SET kind = ?, state = ?, item = ?, base = ?, attempts = ?, lastAttemptAt = ?,
                    lastStatus = ?, message = ?, recreate = ?
                WHERE id = ?
                """
        ).execute(
            arguments: [
                operation.kind.rawValue, operation.state.rawValue, ItemCoding.encode(operation.item),
                ItemCoding.encode(operation.base), operation.attempts, operation.lastAttemptAt.map(Timestamp.string),
                operation.lastStatus, operation.message, operation.recreate, operation.id,
            ])
    }

    func deleteOperation(_ db: Database, id: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM __errors WHERE operationId = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM __operations WHERE id = ?").execute(arguments: [id])
    }

    // MARK: Errors

    func error(_ db: Database, operationId: Int64) throws -> OperationError? {
        try Row.fetchOne(db, sql: "SELECT * FROM __errors WHERE operationId = ?", arguments: [operationId])
            .map(Self.error)
    }

    static func error(from row: Row) -> OperationError {
        OperationError(
            operationId: row["operationId"], kind: OperationErrorKind(rawValue: row["kind"]) ?? .failed,
            status: row["status"], message: row["message"], serverItem: ItemCoding.decode(row["serverItem"]),
            clientItem: ItemCoding.decode(row["clientItem"]),
            recordedAt: Timestamp.date(row["recordedAt"]) ?? Date(timeIntervalSince1970: 0))
    }

    func saveError(_ db: Database, _ error: OperationError) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO __errors (operationId, kind, status, message, serverItem, clientItem, recordedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                error.operationId, error.kind.rawValue, error.status, error.message,
                ItemCoding.encode(error.serverItem), ItemCoding.encode(error.clientItem),
                Timestamp.string(error.recordedAt),
            ])
    }

    func clearError(_ db: Database, operationId: Int64) throws {
        try db.execute(sql: "DELETE FROM __errors WHERE operationId = ?", arguments: [operationId])
    }

    // MARK: Config

    func config(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM __config WHERE key = ?", arguments: [key])
    }

    func setConfig(_ db: Database, _ key: String, _ value: String?) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO __config (key, value) VALUES (?, ?)", arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM __config WHERE key = ?", arguments: [key])
        }
    }

    static func deltaTokenKey(table: String, queryId: String) -> String {
        "deltaToken|\(table)|\(queryId)"
    }
}
