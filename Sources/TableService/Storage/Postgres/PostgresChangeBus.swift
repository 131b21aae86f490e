import Foundation
import Logging
import NIOSSL
import PostgresNIO
import SyncProtocol

/// PostgreSQL as the bus that carries changes between service instances: every stamped row sends a
/// notification from the transaction that writes it (a trigger calling `pg_notify`, so nothing is
/// sent for a write that rolls back, and a write made by SQL outside todosync is told too), and
/// each instance keeps one connection listening, which wakes its ``ChangeFeed``.
///
/// The payload is `["table", updatedAt, "id", "owner" or null]`. A listening connection that is
/// lost is opened again with a growing pause. Whenever listening starts, the first time included,
/// every subscriber is woken once (it pulls from its own position, so nothing is lost): one that
/// came before the connection listened, or while it was lost, may have missed a notification.
enum PostgresChangeBus {
    static let channel = "todosync_changes"

    /// The trigger functions (for shared tables, and for tables that keep an owner per row).
    /// (One statement each: an extended-protocol query takes one.)
    static let functionsSQL = [
        """
        CREATE OR REPLACE FUNCTION "__todosync_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('\(channel)', json_build_array(TG_TABLE_NAME, NEW."updatedAt", NEW."id", NULL)::text);
            RETURN NULL;
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION "__todosync_owned_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify(
                '\(channel)', json_build_array(TG_TABLE_NAME, NEW."updatedAt", NEW."id", NEW."\(RowScope.ownerColumn)")::text);
            RETURN NULL;
        END $$
        """,
    ]

    /// Makes `table` announce its writes (owned: with each row's owner).
    static func triggerSQL(table: String, owned: Bool) -> String {
        "CREATE OR REPLACE TRIGGER \"__changed\" AFTER INSERT OR UPDATE ON \(SQLDialect.quoted(table)) FOR EACH ROW "
            + "EXECUTE FUNCTION \"\(owned ? "__todosync_owned_changed" : "__todosync_changed")\"()"
    }

    /// A notification's commit, nil when it is not one of ours.
    static func commit(_ payload: String) -> ChangeFeed.Commit? {
        guard case .array(let parts)? = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
            parts.count == 4,
            case .string(let table) = parts[0], case .number(let stamp) = parts[1], case .string(let id) = parts[2]
        else { return nil }
        return ChangeFeed.Commit(
            table: table, cursor: ChangeCursor(updatedAt: Int64(stamp), id: id), owner: parts[3].stringValue)
    }

    /// The listening connection's settings: the pool's database, user and TLS mode.
    static func configuration(_ location: PostgresLocation) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch location.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        return PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
    }

    /// Listens until cancelled, feeding `feed`; reconnects after a failure.
    static func listen(_ location: PostgresLocation, feed: ChangeFeed, logger: Logger) async {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try Self.configuration(location)
        } catch {
            logger.error("the change channel cannot listen to PostgreSQL (TLS): \(error)")
            return
        }
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 0, logger: logger)
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: channel) { notifications in
                    // Listening now: whatever was written before, subscribers pull once.
                    feed.wakeAll()
                    failures = 0
                    for try await notification in notifications {
                        if let commit = commit(notification.payload) { feed.published(commit) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                if failures == 0 { logger.warning("the change channel's PostgreSQL connection was lost: \(error)") }
            }
            failures += 1
            let pause = min(30, 0.25 * pow(2, Double(min(failures - 1, 10))))
            guard (try? await Task.sleep(for: .seconds(pause))) != nil else { return }
        }
    }
}
