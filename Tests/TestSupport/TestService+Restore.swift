import Foundation
import GRDB

extension TestService {
    /// Stops the service, copies its SQLite file to `copy` as it is now, and starts it again on its
    /// port: a copy to go back to with ``restored(from:to:)``. Returns the running service and the moment of the copy.
    public func copyingDatabase(to copy: String) async throws -> (TestService, moment: Int64) {
        await stop()
        let path = sqlitePath ?? ""
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        let moment = Int64(Date().timeIntervalSince1970 * 1000)
        return (try await TestService(configuration, port: port), moment)
    }

    /// Stops the service, puts the copy at `copy` in place of its database with a new epoch restored
    /// to `moment` (what `todosync restore` does), and starts it again on its port.
    public func restored(from copy: String, to moment: Int64) async throws -> TestService {
        await stop()
        let path = sqlitePath ?? ""
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: copy + suffix) {
            try FileManager.default.copyItem(atPath: copy + suffix, toPath: path + suffix)
        }
        let database = try sideConnection(path)
        try await database.write { db in
            try db.execute(
                sql: """
                    DELETE FROM "__epoch";
                    INSERT INTO "__epoch" ("id", "restoredTo", "beganAt") VALUES (?, ?, ?)
                    """, arguments: [UUID().uuidString.replacingOccurrences(of: "-", with: ""), moment, moment + 1])
        }
        try database.close()
        return try await TestService(configuration, port: port)
    }
}
