import Foundation

/// How both stores keep the installations of ``InstallationRegistry``: the table
/// `__installations`, one row per installation id, its old names as a JSON object
/// (`{"todo.text": 1700000000000}`). Saving merges with what is stored (the later last write, the
/// union of the names), so instances sharing a PostgreSQL database add to each other's rows.
extension InstallationRegistry {
    /// `CREATE TABLE IF NOT EXISTS "__installations" …` in `dialect`.
    static func createTableSQL(dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            CREATE TABLE IF NOT EXISTS "__installations" (
                "id" TEXT NOT NULL PRIMARY KEY, "lastWrite" INTEGER NOT NULL, "oldNames" TEXT NOT NULL DEFAULT '{}')
            """
        case .postgres:
            """
            CREATE TABLE IF NOT EXISTS "__installations" (
                "id" text COLLATE "C" NOT NULL PRIMARY KEY, "lastWrite" bigint NOT NULL,
                "oldNames" jsonb NOT NULL DEFAULT '{}')
            """
        }
    }

    /// The upsert of one installation in `dialect`, with `?` placeholders for id, last write and
    /// old names (JSON).
    static func upsertSQL(dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            INSERT INTO "__installations" ("id", "lastWrite", "oldNames") VALUES (?, ?, ?)
            ON CONFLICT ("id") DO UPDATE SET "lastWrite" = max("lastWrite", excluded."lastWrite"),
                "oldNames" = json_patch("oldNames", excluded."oldNames")
            """
        case .postgres:
            """
            INSERT INTO "__installations" ("id", "lastWrite", "oldNames") VALUES ($1, $2, $3::jsonb)
            ON CONFLICT ("id") DO UPDATE SET "lastWrite" = greatest("__installations"."lastWrite", excluded."lastWrite"),
                "oldNames" = "__installations"."oldNames" || excluded."oldNames"
            """
        }
    }

    /// Forgets the least recent installations past ``limit`` (made-up ids cannot grow the table
    /// without end).
    static let pruneSQL = """
        DELETE FROM "__installations" WHERE "id" IN (
            SELECT "id" FROM "__installations" ORDER BY "lastWrite" DESC, "id" DESC LIMIT -1 OFFSET \(limit))
        """

    /// PostgreSQL's ``pruneSQL`` (`LIMIT ALL` rather than SQLite's `LIMIT -1`).
    static let prunePostgresSQL = """
        DELETE FROM "__installations" WHERE "id" IN (
            SELECT "id" FROM "__installations" ORDER BY "lastWrite" DESC, "id" DESC OFFSET \(limit))
        """

    /// The select of every installation: id, last write, old names as JSON text.
    static func selectSQL(dialect: SQLDialect) -> String {
        let names = dialect == .postgres ? "\"oldNames\"::text" : "\"oldNames\""
        return "SELECT \"id\", \"lastWrite\", \(names) FROM \"__installations\""
    }
}

extension InstallationRegistry.Installation {
    /// Its old names as stored (a JSON object of name → milliseconds).
    var oldNamesJSON: String {
        let data = (try? JSONSerialization.data(withJSONObject: oldNames, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// An installation read back; a malformed `oldNames` is an error (the database is corrupt or
    /// a newer version wrote it).
    init(id: String, lastWrite: Int64, oldNamesJSON: String) throws(TableError) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(oldNamesJSON.utf8)) as? [String: Any] else {
            throw .invalidRequest(
                "The installation \(id) is stored with old names that are not a JSON object; "
                    + "the database may be damaged or written by a newer todosync.")
        }
        var names: [String: Int64] = [:]
        for (name, value) in object {
            guard let number = value as? NSNumber else {
                throw .invalidRequest("The installation \(id) is stored with a bad time for \(name).")
            }
            names[name] = number.int64Value
        }
        self.init(id: id, lastWrite: lastWrite, oldNames: names)
    }
}
