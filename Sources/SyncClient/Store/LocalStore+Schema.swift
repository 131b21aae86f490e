import GRDB
import Storage
import SyncProtocol

/// The data tables' schema: which tables the store holds (`__tables`), the type of each of their
/// columns (`__columns`), and the migrations that add a table or a column, each in the transaction
/// that needs it.
extension LocalStore {
    /// The step that records every data table and the type of its columns.
    static let columnsMigration = StoreMigration("v7-table-columns") { db in
        try db.execute(
            sql: """
                CREATE TABLE __tables (name TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                CREATE TABLE __columns (
                    tableName TEXT NOT NULL, columnName TEXT NOT NULL, type TEXT NOT NULL,
                    position INTEGER NOT NULL, PRIMARY KEY (tableName, columnName)
                ) WITHOUT ROWID;
                """)
    }

    /// Checks a table name: 1 to 64 ASCII letters, digits and underscores, not starting with a digit
    /// or with `__` (the store's own tables).
    static func checkTableName(_ name: String) throws(SyncError) {
        let bytes = Array(name.utf8)
        func isWordByte(_ byte: UInt8) -> Bool {
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 95
        }
        guard let first = bytes.first, !(48...57).contains(first), bytes.count <= 64, bytes.allSatisfy(isWordByte),
            !name.hasPrefix("__")
        else { throw .invalidTableName(name) }
    }

    /// The tables every connection sees, by name.
    var tables: [String: TableDescription] { catalog.committed.mapValues(\.description) }

    /// The page layouts of the tables, by name.
    var layouts: [String: PageLayout] { catalog.committed.mapValues(\.layout) }

    /// The list indexes of the tables, by name.
    var listIndexes: [String: ListIndex] { catalog.committed.mapValues(\.listIndex) }

    /// The description of `table` as every connection sees it.
    func description(of table: String) throws(SyncError) -> TableDescription {
        guard let entry = catalog.committed[table] else { throw .unknownTable(table) }
        return entry.description
    }

    /// The description of `table` as `db` sees it (with columns its running write added).
    func description(of table: String, in db: Database) throws -> TableDescription {
        guard let entry = catalog.entry(table, for: db) else { throw SyncError.unknownTable(table) }
        return entry.description
    }

    /// The newest description of `table` for `db`, or `table` itself when it is not in the catalog.
    func current(_ table: TableDescription, in db: Database) -> TableDescription {
        catalog.entry(table.name, for: db)?.description ?? table
    }

    /// Adds `table` to the store, or brings its local table up to it, in the caller's write
    /// transaction: the columns saved before keep their types and places, columns of `table` the
    /// store lacks are added. Returns the table as the store now holds it.
    ///
    /// A name is checked by ``checkTableName(_:)``, unless `strictName` is false (tables given when the
    /// store opens, as earlier versions allowed them): then it must only be non-empty and not start with `__`.
    @discardableResult
    func describe(_ db: Database, _ table: TableDescription, strictName: Bool = true) throws -> TableDescription {
        if strictName {
            try Self.checkTableName(table.name)
        } else if table.name.isEmpty || table.name.hasPrefix("__") {
            throw SyncError.invalidTableName(table.name)
        }
        let described = try Self.merged(table, in: db)
        try Self.create(described, in: db)
        catalog.set(described, in: db)
        return described
    }

    /// Widens `table` so that it holds `values` (column name to a value seen): new columns typed from
    /// their first value other than null, a column of nulls typed by its first value, an integer column
    /// made real for a fraction. Runs in the caller's write transaction; returns the table as it is now.
    func widen(_ db: Database, _ table: String, for values: [(String, JSONValue)]) throws -> TableDescription {
        var description = try description(of: table, in: db)
        var changed = false
        for (name, value) in values where TableDescription.canBeColumn(name) {
            guard !SystemColumn.all.contains(name) else { continue }
            if let index = description.columns.firstIndex(where: { $0.name == name }) {
                if let type = ColumnValue.widened(description.columns[index].type, for: value) {
                    description.columns[index].type = type
                    changed = true
                }
            } else {
                description.columns.append(TableDescription.Column(name, ColumnValue.type(of: value) ?? .null))
                changed = true
            }
        }
        guard changed else { return description }
        try Self.create(description, in: db)
        catalog.set(description, in: db)
        return description
    }

    /// Widens `table` for the members of `items` (see ``widen(_:_:for:)``).
    func widen(_ db: Database, _ table: String, forItems items: [Item]) throws -> TableDescription {
        let current = try description(of: table, in: db)
        var seen: [(String, JSONValue)] = []
        for item in items {
            // By name: columns that come together are added in the same order every time.
            for (name, value) in item.sorted(by: { $0.key < $1.key }) {
                guard let type = current.columnType(name) else {
                    if !SystemColumn.all.contains(name), TableDescription.canBeColumn(name) {
                        seen.append((name, value))
                    }
                    continue
                }
                if ColumnValue.widened(type, for: value) != nil { seen.append((name, value)) }
            }
        }
        guard !seen.isEmpty else { return current }
        // Nulls last: a column first seen as null takes the type of a value seen with it.
        return try widen(db, table, for: seen.filter { $0.1 != .null } + seen.filter { $0.1 == .null })
    }

    /// Widens `table` for the extras of pulled `rows` and lays every row out for the table as it is
    /// then (see ``PulledRow/laidOut(for:)``).
    func widen(_ db: Database, _ table: String, forPulled rows: [PulledRow]) throws -> (TableDescription, [PulledRow]) {
        let extras = rows.flatMap(\.extras)
        let description =
            try extras.isEmpty
            ? description(of: table, in: db)
            : widen(db, table, for: extras.filter { $0.1 != .null } + extras.filter { $0.1 == .null })
        let width = description.allColumns.count
        guard !extras.isEmpty || rows.contains(where: { $0.values.count != width }) else { return (description, rows) }
        return (description, rows.map { PulledRow(values: $0.laidOut(for: description)) })
    }

    /// The names of the tables saved in the store.
    static func savedTables(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM __tables ORDER BY name")
    }

    /// `table` with the columns the store saved for it: saved columns first (with their saved
    /// types), then those of `table` the store lacks, then (for a table of an older todosync) the
    /// columns the SQLite table has that neither names, typed from their declared type.
    private static func merged(_ table: TableDescription, in db: Database) throws -> TableDescription {
        var columns = try Row.fetchAll(
            db, sql: "SELECT columnName, type FROM __columns WHERE tableName = ? ORDER BY position",
            arguments: [table.name]
        ).map { row in
            TableDescription.Column(
                row["columnName"], try StoredValue.known(row["type"], Column("type"), of: "__columns"))
        }
        for column in table.columns where !columns.contains(where: { $0.name == column.name }) {
            columns.append(column)
        }
        if try db.tableExists(table.name) {
            for column in try db.columns(in: table.name) where !columns.contains(where: { $0.name == column.name }) {
                let type: TableDescription.ColumnType =
                    switch column.type.uppercased() {
                    case "TEXT": .text
                    case "INTEGER": .integer
                    case "REAL": .real
                    default: .null
                    }
                columns.append(TableDescription.Column(column.name, type))
            }
        }
        return TableDescription(name: table.name, columns: columns)
    }

    /// Creates the local table of `table`, or adds the columns it lacks, and saves its columns'
    /// types; then brings its list index up to its columns.
    private static func create(_ table: TableDescription, in db: Database) throws {
        let name = table.name.quotedSQLName
        if try db.tableExists(table.name) {
            let existing = Set(try db.columns(in: table.name).map(\.name))
            for column in table.allColumns where !existing.contains(column.name) {
                try db.execute(
                    sql: "ALTER TABLE \(name) ADD COLUMN \(column.name.quotedSQLName) \(column.type.sqlType)")
            }
        } else {
            let columns = table.allColumns.map { column in
                column.name == SystemColumn.id
                    ? "\"id\" TEXT PRIMARY KEY NOT NULL"
                    : "\(column.name.quotedSQLName) \(column.type.sqlType)"
            }
            try db.execute(sql: "CREATE TABLE \(name) (\(columns.joined(separator: ", ")))")
            try db.execute(
                sql: "CREATE INDEX \("\(table.name)_updatedAt".quotedSQLName) ON \(name) (updatedAt, id)")
        }
        // Lists page by rowid now; this index of an older todosync only slowed every write.
        try db.execute(sql: "DROP INDEX IF EXISTS \("\(table.name)_createdAt".quotedSQLName)")
        try db.execute(sql: "INSERT OR IGNORE INTO __tables (name) VALUES (?)", arguments: [table.name])
        try saveColumns(db, table)
    }

    /// Saves the columns of `table` in `__columns` as they are now, and brings its list index
    /// (triggers, search index) to them.
    static func saveColumns(_ db: Database, _ table: TableDescription) throws {
        try db.execute(sql: "DELETE FROM __columns WHERE tableName = ?", arguments: [table.name])
        for (position, column) in table.columns.enumerated() {
            try db.execute(
                sql: "INSERT INTO __columns (tableName, columnName, type, position) VALUES (?, ?, ?, ?)",
                arguments: [table.name, column.name, column.type.rawValue, position])
        }
        try ListIndex(table).create(in: db)
    }
}
