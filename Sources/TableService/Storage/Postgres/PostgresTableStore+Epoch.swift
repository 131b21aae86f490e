import Logging
import PostgresNIO
import SyncProtocol

extension PostgresTableStore {
    var epoch: ServiceEpoch? { currentEpoch.withLock { $0 } }

    /// Reads the epoch again (after a lost connection: the cluster may have been recovered to an
    /// earlier point meanwhile, and every instance must then answer with the new epoch).
    func refreshEpoch() async {
        do {
            let epoch = try await pool.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: self.logger)
                return try await self.prepareEpoch(connection)
            }
            currentEpoch.withLock { $0 = epoch }
        } catch {
            logger.warning("cannot read the database's epoch again: \(Self.describe(error))")
        }
    }

    /// The database's epoch, in the transaction that prepares the store (under the schema lock, so
    /// that instances starting together agree on one). A new database begins one. A database whose
    /// cluster runs on another timeline than the one the epoch was begun on was recovered to an
    /// earlier point (a point-in-time restore, or a failover that may have lost the last commits):
    /// it begins a new epoch, restored to its newest row, and todosync clients reconcile with it.
    func prepareEpoch(_ connection: PostgresConnection) async throws -> ServiceEpoch {
        try await connection.query(PostgresQuery(unsafeSQL: EpochTable.createSQL(dialect: .postgres)), logger: logger)
        // The timeline is the first eight hex digits of the current WAL file's name.
        let timelineRows = try await connection.query(
            "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint", logger: logger)
        var timeline: Int64 = 0
        for try await value in timelineRows.decode(Int64.self) { timeline = value }
        let rows = try await connection.query(
            "SELECT \"id\", \"restoredTo\", \"timeline\" FROM \"__epoch\" LIMIT 1", logger: logger)
        var saved: (id: String, restoredTo: Int64?, timeline: Int64?)?
        for try await row in rows {
            let cells = row.makeRandomAccess()
            saved = (
                try cells["id"].decode(String.self), try cells["restoredTo"].decode(Int64?.self),
                try cells["timeline"].decode(Int64?.self)
            )
        }
        if let saved {
            if saved.timeline == timeline { return ServiceEpoch(id: saved.id, restoredTo: saved.restoredTo) }
            if saved.timeline == nil {
                try await connection.query(
                    "UPDATE \"__epoch\" SET \"timeline\" = \(timeline)", logger: logger)
                return ServiceEpoch(id: saved.id, restoredTo: saved.restoredTo)
            }
        }
        let epoch = ServiceEpoch(
            id: EpochTable.newID(), restoredTo: saved == nil ? nil : try await newestChange(connection))
        try await connection.query("DELETE FROM \"__epoch\"", logger: logger)
        try await connection.query(
            """
            INSERT INTO "__epoch" ("id", "restoredTo", "beganAt", "timeline")
            VALUES (\(epoch.id), \(epoch.restoredTo), \(clock()), \(timeline))
            """, logger: logger)
        if saved == nil {
            logger.info("a new database: epoch \(epoch) begins on PostgreSQL timeline \(timeline)")
        } else {
            logger.notice(
                "PostgreSQL runs on timeline \(timeline), not the one of the last epoch: the database went back in time; new epoch \(epoch)"
            )
        }
        return epoch
    }

    /// The newest `updatedAt` of every table: the moment a recovered database went back to.
    private func newestChange(_ connection: PostgresConnection) async throws -> Int64? {
        let names = try await connection.query("SELECT \"name\" FROM \"__tables\"", logger: logger)
        var tables: [String] = []
        for try await name in names.decode(String.self) { tables.append(name) }
        var newest: Int64?
        for table in tables {
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT max(\"updatedAt\") FROM \(SQLDialect.quoted(table))"), logger: logger)
            for try await value in rows.decode(Int64?.self) {
                if let value { newest = max(newest ?? value, value) }
            }
        }
        return newest
    }
}
