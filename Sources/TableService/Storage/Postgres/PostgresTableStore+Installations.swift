import PostgresNIO

/// The installations seen writing, in PostgreSQL (``InstallationRegistry``): shared by every
/// instance of the database.
extension PostgresTableStore {
    var isShared: Bool { true }

    func installations() async throws(TableError) -> [InstallationRegistry.Installation] {
        try await openedForRequest()
        let rows: [(String, Int64, String)]
        do {
            rows = try await client.withConnection { connection in
                let result = try await connection.query(
                    PostgresQuery(unsafeSQL: InstallationRegistry.selectSQL(dialect: .postgres)), logger: self.logger)
                var rows: [(String, Int64, String)] = []
                for try await row in result.decode((String, Int64, String).self) { rows.append(row) }
                return rows
            }
        } catch {
            throw Self.tableError(error)
        }
        var installations: [InstallationRegistry.Installation] = []
        for (id, lastWrite, names) in rows {
            installations.append(try .init(id: id, lastWrite: lastWrite, oldNamesJSON: names))
        }
        return installations
    }

    func saveInstallations(_ installations: [InstallationRegistry.Installation]) async throws(TableError) {
        guard !installations.isEmpty else { return }
        try await openedForRequest()
        // In id order: two instances saving the same installations lock their rows in one order.
        let sorted = installations.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        do {
            try await client.withTransaction(logger: logger) { connection in
                for installation in sorted {
                    var binds = PostgresBindings()
                    binds.append(installation.id)
                    binds.append(installation.lastWrite)
                    binds.append(installation.oldNamesJSON)
                    try await connection.query(
                        PostgresQuery(unsafeSQL: InstallationRegistry.upsertSQL(dialect: .postgres), binds: binds),
                        logger: self.logger)
                }
                try await connection.query(
                    PostgresQuery(unsafeSQL: InstallationRegistry.prunePostgresSQL), logger: self.logger)
            }
        } catch {
            throw Self.tableError(error)
        }
    }
}
