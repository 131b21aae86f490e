import Foundation
import GRDB

/// The service's epoch, kept in the SQLite file (`__epoch`, exactly one row): a new one begins
/// each time the database is restored from a backup, so that clients learn that the service went
/// back in time and reconcile against it.
///
/// `id` is 32 lowercase hex characters; `restoredTo` is the time the data was restored to (ms
/// since 1970; nil for an epoch that no restore began); `beganAt` is when the epoch began.
public struct ServiceEpochRecord: Sendable, Equatable {
    public let id: String
    public let restoredTo: Int64?
    public let beganAt: Int64

    /// Creates the table when missing.
    public static let createTableSQL =
        #"CREATE TABLE IF NOT EXISTS "__epoch" ("id" TEXT NOT NULL, "restoredTo" INTEGER, "beganAt" INTEGER NOT NULL)"#

    /// Begins a new epoch in `db` (call it inside a transaction): the table is created if missing,
    /// its row replaced by a new random id, `restoredTo` and `beganAt` (ms since 1970).
    @discardableResult
    public static func begin(restoredTo: Int64?, now: Int64, in db: Database) throws -> ServiceEpochRecord {
        let record = ServiceEpochRecord(id: randomID(), restoredTo: restoredTo, beganAt: now)
        try db.execute(sql: createTableSQL)
        try db.execute(sql: #"DELETE FROM "__epoch""#)
        try db.execute(
            sql: #"INSERT INTO "__epoch" ("id", "restoredTo", "beganAt") VALUES (?, ?, ?)"#,
            arguments: [record.id, record.restoredTo, record.beganAt])
        return record
    }

    /// The epoch in `db`, or nil when none began (no table, or no row).
    public static func current(in db: Database) throws -> ServiceEpochRecord? {
        guard try db.tableExists("__epoch") else { return nil }
        guard let row = try Row.fetchOne(db, sql: #"SELECT "id", "restoredTo", "beganAt" FROM "__epoch" LIMIT 1"#)
        else { return nil }
        return ServiceEpochRecord(id: row[0], restoredTo: row[1], beganAt: row[2])
    }

    /// 32 lowercase hex characters from the system's random generator.
    static func randomID() -> String {
        (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max)) }.joined()
    }
}
