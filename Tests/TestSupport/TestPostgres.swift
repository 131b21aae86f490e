import Foundation
import Logging
import PostgresNIO
import TableService

/// PostgreSQL for tests: the throwaway cluster that the test command starts
/// (`scripts/postgres-cluster.sh`) and passes in `TODOSYNC_TEST_POSTGRES_URL`, and a fresh,
/// empty database in it for each test that asks.
///
/// Tests that need PostgreSQL run whenever the URL is set. Without it they are skipped, except
/// under CI (`CI=true`), where a missing cluster is a failure: `make test` must exercise both
/// backends.
public enum TestPostgres {
    /// The environment variable holding the cluster's URL.
    public static let environmentKey = "TODOSYNC_TEST_POSTGRES_URL"

    /// The cluster's URL, when the test command started one.
    public static var clusterURL: String? {
        ProcessInfo.processInfo.environment[environmentKey].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether tests must run against PostgreSQL too (the cluster is there, or this is CI).
    public static var isRequired: Bool {
        clusterURL != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Why a fresh database could not be made, with the server's own words.
    public struct CreateFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Why a test that needs PostgreSQL cannot run.
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "No PostgreSQL cluster for the tests: run them with `make test` (scripts/test.sh starts one), "
                + "or set \(TestPostgres.environmentKey) to postgres://USER@127.0.0.1:PORT/DATABASE."
        }
    }

    /// A table service's location of a new, empty database in the cluster.
    public static func freshDatabase(poolSize: Int) async throws -> TableService.Database {
        .postgres(try PostgresLocation(url: try await freshDatabaseURL(), poolSize: poolSize))
    }

    /// Creates an empty database in the cluster and returns its URL (same server and user).
    public static func freshDatabaseURL() async throws -> String {
        guard let clusterURL, var components = URLComponents(string: clusterURL), let host = components.host,
            let user = components.user
        else { throw Missing() }
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let configuration = PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        let logger = Logger(label: "todosync.tests.postgres")
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            do {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\" STRATEGY FILE_COPY"), logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        } catch {
            // PSQLError's description hides the server's message; a test that fails here says it.
            throw CreateFailed(description: "Creating a test database failed: \(String(reflecting: error))")
        }
        components.path = "/" + name
        return components.string ?? clusterURL
    }
}

extension TestPostgres {
    /// The rows of a query whose columns are all text, read straight from the database at `url`
    /// (not through the service under test).
    public static func textRows(_ sql: String, url: String) async throws -> [[String]] {
        guard let components = URLComponents(string: url), let host = components.host, let user = components.user
        else { throw Missing() }
        let configuration = PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        let logger = Logger(label: "todosync.tests.postgres")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
        defer { Task { try? await connection.close() } }
        var rows: [[String]] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
            rows.append(try row.map { try $0.decode(String.self) })
        }
        return rows
    }
}
