import GRDB

/// The installations seen writing, in the SQLite file (``InstallationRegistry``).
extension SQLiteTableStore {
    /// This process is the file's only writer.
    var isShared: Bool { false }

    func installations() async throws(TableError) -> [InstallationRegistry.Installation] {
        let rows = try readNow { db in
            try Row.fetchAll(db, sql: InstallationRegistry.selectSQL(dialect: .sqlite)).map {
                (id: $0[0] as String, lastWrite: $0[1] as Int64, oldNames: $0[2] as String)
            }
        }
        var installations: [InstallationRegistry.Installation] = []
        for row in rows {
            installations.append(try .init(id: row.id, lastWrite: row.lastWrite, oldNamesJSON: row.oldNames))
        }
        return installations
    }

    func saveInstallations(_ installations: [InstallationRegistry.Installation]) async throws(TableError) {
        guard !installations.isEmpty else { return }
        try await writeNow { db in
            let upsert = try db.cachedStatement(sql: InstallationRegistry.upsertSQL(dialect: .sqlite))
            for installation in installations {
                try upsert.execute(arguments: [installation.id, installation.lastWrite, installation.oldNamesJSON])
            }
            try db.execute(sql: InstallationRegistry.pruneSQL)
        }
    }
}
