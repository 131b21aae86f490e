import Foundation
import GRDB
import SyncProtocol

/// Schema changes of a `--schema` file in SQLite: applied at open in one transaction (renames,
/// records), then backfilled in batches (``SQLiteTableStore/backfillBatch(_:limit:)``).
extension SQLiteTableStore {
    /// Plans `declarations` against the file and applies the plan; a refused file changes nothing
    /// (the caller's transaction rolls back).
    func applySchemaChanges(_ db: Database, _ declarations: [TableDeclaration]) throws {
        guard !declarations.isEmpty else { return }
        let plan = try SchemaChangePlanner.plan(
            declarations, stored: try SchemaRegistry.read(db), recorded: try Self.records(db), now: clock())
        for statement in plan.statements {
            try db.execute(sql: statement.sql, arguments: Self.arguments(statement.values))
        }
    }

    /// Every recorded schema change, oldest first.
    static func records(_ db: Database) throws -> [SchemaChangeRecord] {
        try Row.fetchAll(db, sql: SchemaChangeRecord.selectSQL(dialect: .sqlite)).map { row in
            try SchemaChangeRecord(SQLRow(row))
        }
    }

    /// Adds the hidden ``BackfillMarker/column`` to `table` unless it has it.
    static func addBackfillMarker(_ db: Database, to table: String) throws {
        guard try !hasBackfillMarker(db, table) else { return }
        try db.execute(
            sql: "ALTER TABLE \(SQLDialect.quoted(table)) ADD COLUMN \(SQLDialect.quoted(BackfillMarker.column)) TEXT")
    }

    static func hasBackfillMarker(_ db: Database, _ table: String) throws -> Bool {
        try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLDialect.quoted(table)))").contains {
            $0["name"] as String == BackfillMarker.column
        }
    }

    func versionBeforeBackfill(in table: String, _ current: StoredItem) async throws(TableError) -> String? {
        guard let schema = registry.schema(of: table) else { return nil }
        return try readNow { db in try self.versionBeforeBackfill(db, schema, current) }
    }

    /// The version `current` had before backfills stamped it, when no one wrote it since.
    func versionBeforeBackfill(_ db: Database, _ schema: TableSchema, _ current: StoredItem) throws -> String? {
        guard try Self.hasBackfillMarker(db, schema.name) else { return nil }
        let text = try String.fetchOne(
            db,
            sql: "SELECT \(SQLDialect.quoted(BackfillMarker.column)) FROM \(SQLDialect.quoted(schema.name)) "
                + "WHERE \"id\" = ?", arguments: [current.id])
        return BackfillMarker(text)?.versionBefore(rowUpdatedAt: current.updatedAt)
    }

    /// What `declarations` would change in the file at `path`, read without changing it (a
    /// missing file: every table is new).
    static func planSchemaChanges(
        path: String, declarations: [TableDeclaration]
    ) throws(TableServiceError) -> SchemaChangeReport {
        guard FileManager.default.fileExists(atPath: path) else {
            let plan = try? SchemaChangePlanner.plan(declarations, stored: [:], recorded: [], now: 0)
            return SchemaChangeReport(plan ?? .init()) { _ in 0 }
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                let hasMetadata = try db.tableExists("__tables")
                let stored = hasMetadata ? try SchemaRegistry.read(db) : [:]
                let recorded = try db.tableExists("__schema_changes") ? try records(db) : []
                let plan = try SchemaChangePlanner.plan(declarations, stored: stored, recorded: recorded, now: 0)
                var counts: [Int] = []
                for change in plan.changes {
                    let sql = SchemaChangePlanner.backfillCountSQL(change, in: stored[change.table.lowercased()])
                    counts.append(try sql.map { try Int.fetchOne(db, sql: $0) ?? 0 } ?? 0)
                }
                return SchemaChangeReport(plan) { counts[$0] }
            }
        } catch let error as ServiceSchemaError {
            throw .invalidConfiguration(error.description)
        } catch {
            throw .cannotOpenDatabase("\(error)")
        }
    }
}
