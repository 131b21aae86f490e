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
            INSERT INTO "__installations" ("id", "lastWrite", "oldNames") VALUES (?, ?, ?::jsonb)
            ON CONFLICT ("id") DO UPDATE SET "lastWrite" = greatest("__installations"."lastWrite", excluded."lastWrite"),
                "oldNames" = "__installations"."oldNames" || excluded."oldNames"
            """
        }
    }

    /// Forgets the least recent installations past ``limit`` (made-up ids cannot grow the table
    /// without end); SQLite writes "no limit" as `LIMIT -1`.
    static func pruneSQL(dialect: SQLDialect) -> String {
        let noLimit = dialect == .sqlite ? " LIMIT -1" : ""
        return """
            DELETE FROM "__installations" WHERE "id" IN (
                SELECT "id" FROM "__installations" ORDER BY "lastWrite" DESC, "id" DESC\(noLimit) OFFSET \(limit))
            """
    }

    /// The select of every installation: id, last write, old names as JSON text.
    static func selectSQL(dialect: SQLDialect) -> String {
        let names = dialect == .postgres ? "\"oldNames\"::text" : "\"oldNames\""
        return "SELECT \"id\", \"lastWrite\", \(names) FROM \"__installations\""
    }
}

extension TableStorage {
    /// The installations kept in the database (``InstallationRegistry``).
    func installations() async throws(TableError) -> [InstallationRegistry.Installation] {
        try await query(SQLStatement(sql: InstallationRegistry.selectSQL(dialect: dialect))).map {
            row throws(TableError) in
            try InstallationRegistry.Installation(
                id: row[0].text(), lastWrite: row[1].integer(), oldNamesJSON: row[2].text())
        }
    }

    /// Saves `installations` in one transaction, each merged with the stored row (the later last
    /// write, the union of the old names), then forgets the least recent past the limit.
    func saveInstallations(_ installations: [InstallationRegistry.Installation]) async throws(TableError) {
        guard !installations.isEmpty else { return }
        let upsert = InstallationRegistry.upsertSQL(dialect: dialect)
        // In id order: two instances saving the same installations lock their rows in one order.
        let sorted = installations.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        try await execute(
            sorted.map {
                SQLStatement(sql: upsert, values: [.text($0.id), .integer($0.lastWrite), .text($0.oldNamesJSON)])
            }
                + [SQLStatement(sql: InstallationRegistry.pruneSQL(dialect: dialect))])
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
