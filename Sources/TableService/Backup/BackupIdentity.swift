import Foundation
import GRDB

/// The identity of a SQLite database for its backups (`__backupIdentity`, one row): recorded in
/// the backup folder's `backup.json`, so that a folder is never shared by two databases. A restore
/// gives the restored file a new one (a restored database is a new one for backups) and notes the
/// one it was restored from.
enum BackupIdentity {
    static let createTableSQL =
        #"CREATE TABLE IF NOT EXISTS "__backupIdentity" ("id" TEXT NOT NULL, "restoredFrom" TEXT)"#

    /// The database's identity, created on first use (call in a write transaction).
    static func ensure(in db: Database) throws -> String {
        if let id = try current(in: db)?.id { return id }
        try db.execute(sql: createTableSQL)
        let id = EpochTable.newID()
        try db.execute(sql: #"INSERT INTO "__backupIdentity" ("id") VALUES (?)"#, arguments: [id])
        return id
    }

    /// The identity and the one it was restored from, when the database has one.
    static func current(in db: Database) throws -> (id: String, restoredFrom: String?)? {
        guard try db.tableExists("__backupIdentity") else { return nil }
        guard let row = try Row.fetchOne(db, sql: #"SELECT "id", "restoredFrom" FROM "__backupIdentity" LIMIT 1"#)
        else { return nil }
        return (row["id"], row["restoredFrom"])
    }

    /// Gives a restored database a new identity, noting the one of the backup it came from.
    static func renew(restoredFrom: String, in db: Database) throws {
        try db.execute(sql: createTableSQL)
        try db.execute(sql: #"DELETE FROM "__backupIdentity""#)
        try db.execute(
            sql: #"INSERT INTO "__backupIdentity" ("id", "restoredFrom") VALUES (?, ?)"#,
            arguments: [EpochTable.newID(), restoredFrom])
    }
}
