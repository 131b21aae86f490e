import Foundation
import GRDB
import Storage

/// The ids of the service's rows a verify has seen, in a SQLite file of its own in the temporary
/// folder (never in the store, which verify does not write): the second pass asks it which local
/// rows the service did not send, with memory flat in the number of rows. The file is thrown away
/// after: its writes are never synced to the disk.
struct VerifyScratch {
    private let database: DatabaseQueue
    private let path: String

    init() throws {
        path = NSTemporaryDirectory() + "todosync-verify-\(UUID().uuidString).sqlite"
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        try database.write { db in try db.execute(sql: "CREATE TABLE seen (id TEXT PRIMARY KEY) WITHOUT ROWID") }
    }

    /// Keeps `ids` as seen on the service.
    func remember(_ ids: [String]) throws {
        try database.write { db in
            let statement = try db.makeStatement(sql: "INSERT OR IGNORE INTO seen (id) VALUES (?)")
            for id in ids { try statement.execute(arguments: [id]) }
        }
    }

    /// Those of `ids` the service did not send.
    func unseen(_ ids: [String]) throws -> Set<String> {
        let seen = try database.read { db in
            try String.fetchSet(
                db, sql: "SELECT id FROM seen WHERE id IN (\(sqlParameters(ids.count)))",
                arguments: StatementArguments(ids))
        }
        return Set(ids).subtracting(seen)
    }

    /// Deletes the file.
    func remove() {
        try? database.close()
        try? FileManager.default.removeItem(atPath: path)
    }
}
