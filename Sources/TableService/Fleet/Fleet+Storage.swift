import Foundation

/// How both stores keep the fleet: `__devices` (one row a device, its ``DeviceRecord`` as JSON,
/// with `savedAt` so that instances read what the others saved since), `__fleet_alerts` (one row
/// per alert, unique per episode, so that one instance sends each) and `__device_bundles` (the
/// support bundles devices uploaded, base64); with the revocations and the escrow, the fleet's
/// tables are made by each store when it opens, with its other metadata tables, so that no request
/// can come before them.
enum FleetTables {
    /// Every table of the fleet, the revocations' and the escrow's included. PostgreSQL runs them
    /// under the store's schema lock: its `CREATE TABLE IF NOT EXISTS` is not safe against a
    /// concurrent one (the loser fails on the type it also creates).
    static func createSQL(dialect: SQLDialect) -> [String] {
        let text = dialect.textColumn
        let integer = dialect.integerColumn
        let serial = dialect == .postgres ? "bigserial PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE IF NOT EXISTS "__devices" (
                "id" \(text) NOT NULL PRIMARY KEY, "lastContact" \(integer) NOT NULL, "savedAt" \(integer) NOT NULL,
                "record" \(text) NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS \"__devices_savedAt\" ON \"__devices\" (\"savedAt\")",
            """
            CREATE TABLE IF NOT EXISTS "__fleet_alerts" (
                "id" \(serial), "episode" \(text) NOT NULL UNIQUE, "event" \(text) NOT NULL,
                "device" \(text) NOT NULL, "tableName" \(text) NOT NULL, "state" \(text) NOT NULL,
                "since" \(integer) NOT NULL, "at" \(integer) NOT NULL, "claimedBy" \(text) NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS "__device_bundles" (
                "device" \(text) NOT NULL PRIMARY KEY, "receivedAt" \(integer) NOT NULL, "zip" \(text) NOT NULL)
            """,
            Revocations.createSQL(dialect: dialect),
        ] + Escrow.createSQL(dialect: dialect)
    }

    /// Whether the table of the installation registry the fleet replaced (`__installations`: id,
    /// last write, old names) is still there: a database of an earlier version.
    static func installationsTableSQL(dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            "SELECT count(*) AS \"count\" FROM sqlite_master WHERE type = 'table' AND name = '__installations'"
        case .postgres: "SELECT count(*) AS \"count\" FROM pg_tables WHERE tablename = '__installations'"
        }
    }

    /// The registry's rows.
    static func installationsSQL(dialect: SQLDialect) -> String {
        let names = dialect == .postgres ? "\"oldNames\"::text AS \"oldNames\"" : "\"oldNames\""
        return "SELECT \"id\", \"lastWrite\", \(names) FROM \"__installations\""
    }

    /// The statements that move the registry's `rows` into `__devices` and drop its table.
    static func moveInstallations(_ rows: [SQLRow], dialect: SQLDialect) throws(TableError) -> [SQLStatement] {
        var devices: [DeviceRecord] = []
        for row in rows {
            var record = DeviceRecord(id: try row.text("id"), lastContact: try row.integer("lastWrite"))
            record.oldNames =
                (try? JSONDecoder().decode([String: Int64].self, from: Data(try row.text("oldNames").utf8))) ?? [:]
            devices.append(record)
        }
        return saveStatements(devices, savedAt: 0, dialect: dialect) + [
            SQLStatement(sql: "DROP TABLE \"__installations\"")
        ]
    }

    /// The upserts of `devices`, in id order (so that two instances lock rows in one order).
    static func saveStatements(_ devices: [DeviceRecord], savedAt: Int64, dialect: SQLDialect) -> [SQLStatement] {
        let encoder = JSONEncoder()
        let upsert = upsertSQL(dialect: dialect)
        return devices.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }.compactMap { device in
            guard let data = try? encoder.encode(device) else { return nil }
            return SQLStatement(
                sql: upsert,
                values: [
                    .text(device.id), .integer(device.lastContact), .integer(savedAt),
                    .text(String(decoding: data, as: UTF8.self)),
                ])
        }
    }

    /// The upsert of one device. An instance's view never replaces a row saved from a later
    /// contact: another instance saw the device since (this one folds that row in before it saves).
    static func upsertSQL(dialect: SQLDialect) -> String {
        """
        INSERT INTO "__devices" ("id", "lastContact", "savedAt", "record") VALUES (?, ?, ?, ?)
        ON CONFLICT ("id") DO UPDATE SET "lastContact" = excluded."lastContact", "savedAt" = excluded."savedAt",
            "record" = excluded."record"
        WHERE excluded."lastContact" >= "__devices"."lastContact"
        """
    }

    /// Forgets the least recent devices past ``Fleet/limit``; SQLite writes "no limit" as `LIMIT -1`.
    static func pruneSQL(dialect: SQLDialect) -> String {
        let noLimit = dialect == .sqlite ? " LIMIT -1" : ""
        return """
            DELETE FROM "__devices" WHERE "id" IN (
                SELECT "id" FROM "__devices" ORDER BY "lastContact" DESC, "id" DESC\(noLimit) OFFSET \(Fleet.limit))
            """
    }
}

extension TableStorage {
    /// Saves `devices` in one transaction, then forgets the least recent past the limit.
    func saveDevices(_ devices: [DeviceRecord], savedAt: Int64) async throws(TableError) {
        guard !devices.isEmpty else { return }
        try await execute(
            FleetTables.saveStatements(devices, savedAt: savedAt, dialect: dialect)
                + [SQLStatement(sql: FleetTables.pruneSQL(dialect: dialect))])
    }

    /// The devices saved at or after `savedAt`; a row this version cannot read is skipped.
    func devices(savedSince savedAt: Int64) async throws(TableError) -> [(record: DeviceRecord, savedAt: Int64)] {
        let rows = try await query(
            SQLStatement(
                sql: "SELECT \"record\", \"savedAt\" FROM \"__devices\" WHERE \"savedAt\" >= ?",
                values: [.integer(savedAt)]))
        let decoder = JSONDecoder()
        var devices: [(DeviceRecord, Int64)] = []
        for row in rows {
            guard let record = try? decoder.decode(DeviceRecord.self, from: Data(try row.text("record").utf8)) else {
                continue
            }
            devices.append((record, try row.integer("savedAt")))
        }
        return devices
    }

    /// The oldest `updatedAt` past `after` in `table` (one owner's rows when given) and how many
    /// rows are past it, counted up to `limit`; nil when none is.
    func rowsWaiting(
        in table: String, owner: String?, after: Int64, limit: Int
    ) async throws(TableError)
        -> RowsWaiting?
    {
        guard let schema = try await knownSchema(of: table) else { return nil }
        var inner = "SELECT \"updatedAt\" FROM \(SQLDialect.quoted(schema.name)) WHERE \"updatedAt\" > ?"
        var values: [SQLValue] = [.integer(after)]
        if let owner {
            inner += " AND \(SQLDialect.quoted(RowScope.ownerColumn)) = ?"
            values.append(.text(owner))
        }
        inner += " ORDER BY \"updatedAt\" LIMIT \(limit)"
        let rows = try await query(
            SQLStatement(
                sql: "SELECT min(\"updatedAt\") AS \"oldest\", count(*) AS \"count\", max(\"updatedAt\") AS \"newest\" "
                    + "FROM (\(inner)) AS \"waiting\"",
                values: values))
        guard let row = rows.first, try row.value("oldest") != .null else { return nil }
        return RowsWaiting(
            oldest: try row.integer("oldest"), count: Int(try row.integer("count")), newest: try row.integer("newest"))
    }
}
