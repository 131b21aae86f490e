import Foundation
import GRDB

/// What a redacted copy of the store holds (see ``SyncContext/writeRedactedSnapshot(to:removing:)``).
public struct StoreSnapshot: Sendable, Codable, Equatable {
    /// One data table and its rows.
    public struct Table: Sendable, Codable, Equatable {
        public var name: String
        public var rows: Int
    }

    /// The data tables, by name.
    public var tables: [Table]
    /// Queued operations (conflicts included).
    public var operations: Int
    /// Operations in conflict.
    public var conflicts: Int
    /// Exchanges in the flight recorder (`__exchanges`).
    public var exchanges: Int
    /// Entries of the conflict journal.
    public var journalEntries: Int
    /// The schema's steps applied, oldest first (which todosync wrote the store).
    public var migrations: [String]
    /// The copy's size in bytes.
    public var bytes: Int
}

extension StoreSnapshot {
    /// See ``SyncContext/writeRedactedSnapshot(to:removing:)``: `secrets` are removed from the copy
    /// of `store` at `path`, with any JWT-looking value.
    static func write(of store: LocalStore, to path: String, removing secrets: [String]) throws(SyncError) -> Self {
        let redaction = Redaction(secrets: secrets)
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                db.add(
                    function: DatabaseFunction("todosync_redact", argumentCount: 1, pure: true) { values in
                        guard let text = String.fromDatabaseValue(values[0]) else { return nil }
                        return redaction.text(text)
                    })
            }
            let copy = try DatabaseQueue(path: path, configuration: configuration)
            // GRDB's online backup reads inside one read transaction: a consistent snapshot while
            // the dashboard keeps writing (unlike copying the file and its WAL).
            try store.pool.backup(to: copy)
            let summary = try copy.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA secure_delete = ON")
                try db.inTransaction {
                    try db.execute(sql: "DELETE FROM __config WHERE key IN ('applicationKey', 'authToken')")
                    try Self.redactTextColumns(db)
                    return .commit
                }
                try db.execute(sql: "VACUUM")
                return try Self.summary(db)
            }
            try copy.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in redaction.secrets where bytes.range(of: Data(secret.utf8)) != nil {
                throw SnapshotLeak()
            }
            var result = summary
            result.bytes = bytes.count
            return result
        } catch {
            throw SyncError(error)
        }
    }

    /// What ``write(of:to:removing:)`` would copy of `store` now (its size: the store file's).
    static func preview(of store: LocalStore) throws(SyncError) -> Self {
        var preview = try store.read { db in try summary(db) }
        let attributes = try? FileManager.default.attributesOfItem(atPath: store.pool.path)
        preview.bytes = (attributes?[.size] as? Int) ?? 0
        return preview
    }

    /// Runs `todosync_redact` over every text value of every ordinary table (full-text indexes are
    /// rebuilt from their tables afterwards, so that no token of a secret stays in them).
    private static func redactTextColumns(_ db: Database) throws {
        let virtual = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        for table in tables where !virtual.contains(where: { table == $0 || table.hasPrefix($0 + "_") }) {
            for column in try db.columns(in: table) {
                let name = column.name.quotedSQLName
                try db.execute(
                    sql: "UPDATE \(table.quotedSQLName) SET \(name) = todosync_redact(\(name)) "
                        + "WHERE typeof(\(name)) = 'text' AND todosync_redact(\(name)) IS NOT \(name)")
            }
        }
        for index in virtual {
            try db.execute(sql: "INSERT INTO \(index.quotedSQLName) (\(index.quotedSQLName)) VALUES ('rebuild')")
        }
    }

    private static func summary(_ db: Database) throws -> Self {
        let names = try String.fetchAll(db, sql: "SELECT name FROM __tables ORDER BY name")
        let tables = try names.map { name in
            StoreSnapshot.Table(
                name: name, rows: try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedSQLName)") ?? 0)
        }
        let conflicts = OperationRecord.filter(OperationRecord.Columns.state == OperationState.conflict.rawValue)
        return StoreSnapshot(
            tables: tables, operations: try OperationRecord.fetchCount(db), conflicts: try conflicts.fetchCount(db),
            exchanges: try ExchangeRecord.fetchCount(db), journalEntries: try JournalRecord.fetchCount(db),
            migrations: try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"), bytes: 0)
    }
}

/// A secret was still in the snapshot's bytes after redaction (a bug: the copy is not used).
struct SnapshotLeak: Error, CustomStringConvertible {
    var description: String { "a secret was still in the store's copy after redaction; no bundle was written" }
}
