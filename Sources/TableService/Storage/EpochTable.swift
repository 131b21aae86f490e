import Foundation
import GRDB
import SyncProtocol

/// `__epoch`: the one row naming the service's current ``ServiceEpoch``. It lives in the database
/// itself, so a copy of the database carries the epoch it was made in, and whatever brings back an
/// older copy must begin a new one: `todosync restore` does (``begin(_:restoredTo:now:)``), and on
/// PostgreSQL, where restores happen outside todosync, the row's `timeline` tells an instance that
/// the cluster was recovered to an earlier point (recovery ends on a new timeline).
enum EpochTable {
    static func createSQL(dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            CREATE TABLE IF NOT EXISTS "__epoch" ("id" TEXT NOT NULL, "restoredTo" INTEGER, "beganAt" INTEGER NOT NULL)
            """
        case .postgres:
            """
            CREATE TABLE IF NOT EXISTS "__epoch" (
                "id" text NOT NULL, "restoredTo" bigint, "beganAt" bigint NOT NULL, "timeline" bigint)
            """
        }
    }

    /// A new epoch's id: 32 random lowercase hex digits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Begins a new epoch in a SQLite file, in the caller's transaction: what a restore does to the
    /// database it made (`restoredTo`: the moment it went back to).
    @discardableResult
    static func begin(_ db: Database, restoredTo: Int64?, now: Int64) throws -> ServiceEpoch {
        try db.execute(sql: createSQL(dialect: .sqlite))
        let epoch = ServiceEpoch(id: newID(), restoredTo: restoredTo)
        try db.execute(sql: "DELETE FROM \"__epoch\"")
        try db.execute(
            sql: "INSERT INTO \"__epoch\" (\"id\", \"restoredTo\", \"beganAt\") VALUES (?, ?, ?)",
            arguments: [epoch.id, restoredTo, now])
        return epoch
    }

    /// The epoch of a SQLite file, begun now when the file has none (a new database, or one from a
    /// todosync that kept no epoch), in the caller's transaction.
    static func current(_ db: Database, now: Int64) throws -> ServiceEpoch {
        try db.execute(sql: createSQL(dialect: .sqlite))
        if let row = try Row.fetchOne(db, sql: "SELECT \"id\", \"restoredTo\" FROM \"__epoch\" LIMIT 1") {
            return ServiceEpoch(id: row["id"], restoredTo: row["restoredTo"])
        }
        return try begin(db, restoredTo: nil, now: now)
    }
}
