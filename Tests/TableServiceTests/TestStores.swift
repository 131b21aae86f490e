import TestSupport

@testable import TableService

/// A table store on its own, without a service around it: in memory for SQLite, a fresh database on
/// the test cluster for PostgreSQL.
enum TestStores {
    static func open(_ backend: Backend, label: String = "todosync.tests.store") async throws -> any TableStorage {
        switch backend {
        case .sqlite:
            return try SQLiteTableStore(path: nil, clock: TableService.systemClock, tables: [])
        case .postgres:
            let location = try PostgresLocation(url: try await TestPostgres.freshDatabaseURL(), poolSize: 2)
            let store = PostgresTableStore(
                location: location, clock: TableService.systemClock, tables: [], logger: .init(label: label))
            try await store.ready()
            return store
        }
    }
}
