import Foundation
import GRDB
import TestSupport
import Testing

@testable import TableService

/// The fleet's tables are made with the store, before any request: an admin's first revoke cannot
/// come before them, and the installation registry of an earlier version moves into the fleet.
@Suite struct FleetTablesTests {
    @Test(arguments: Backend.all) func aFreshStoreHasTheFleetsTablesBeforeItsFirstRequest(
        _ backend: Backend
    ) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
        let revocations = Revocations(store: store)
        try await revocations.revoke(Revocation(kind: .user, subject: "alice", wipe: true, revokedAt: 1))
        #expect(try await revocations.read().map(\.subject) == ["alice"])
        try await store.saveDevices([DeviceRecord(id: "phone", lastContact: 5)], savedAt: 5)
        #expect(try await store.devices(savedSince: 0).map(\.record.id) == ["phone"])
    }

    /// Rows of the registry (`__installations`) as an earlier version left them.
    static let registrySQL = [
        """
        CREATE TABLE IF NOT EXISTS "__installations" (
            "id" TEXT NOT NULL PRIMARY KEY, "lastWrite" BIGINT NOT NULL, "oldNames" TEXT NOT NULL DEFAULT '{}')
        """,
        #"INSERT INTO "__installations" VALUES ('old-1', 1000, '{"todo.text": 900}'), ('old-2', 2000, '{}')"#,
    ]

    @Test func aSQLiteFileOfAnEarlierVersionHasItsInstallationsMovedIntoTheFleet() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("tables.sqlite")
        try SQLiteTableStore(path: path, clock: TableService.systemClock, tables: []).close()
        // The file as the version before the fleet left it: its registry, and no fleet migration.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            for sql in Self.registrySQL { try db.execute(sql: sql) }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'tableService.v4.fleet'")
        }
        try queue.close()

        let store = try SQLiteTableStore(path: path, clock: TableService.systemClock, tables: [])
        defer { store.close() }
        try await Self.expectMoved(store)
    }

    @Test func aPostgreSQLDatabaseOfAnEarlierVersionHasItsInstallationsMovedIntoTheFleet() async throws {
        guard TestPostgres.isRequired else { return }
        let url = try await TestPostgres.freshDatabaseURL()
        for sql in Self.registrySQL { _ = try await TestPostgres.textRows(sql, url: url) }
        let store = PostgresTableStore(
            location: try PostgresLocation(url: url, poolSize: 2), clock: TableService.systemClock, tables: [],
            logger: .init(label: "todosync.tests.store"))
        defer { store.close() }
        try await store.ready()
        try await Self.expectMoved(store)
    }

    static func expectMoved(_ store: any TableStorage) async throws {
        let devices = try await store.devices(savedSince: 0).map(\.record).sorted { $0.id < $1.id }
        #expect(devices.map(\.id) == ["old-1", "old-2"])
        #expect(devices.map(\.lastContact) == [1000, 2000])
        #expect(devices.first?.oldNames == ["todo.text": 900])
        let registry = try await store.query(
            SQLStatement(sql: FleetTables.installationsTableSQL(dialect: store.dialect)))
        #expect(try registry.first?.integer("count") == 0)
    }
}
