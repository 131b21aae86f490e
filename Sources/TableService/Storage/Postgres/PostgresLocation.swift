import Foundation

/// A PostgreSQL database for the table service, read from a URL such as
/// `postgres://todosync@127.0.0.1:5432/todosync?sslmode=require` (the form `psql` accepts).
/// The password comes from the URL or, when the URL has none, from `PGPASSWORD`.
public struct PostgresLocation: Sendable, Equatable {
    /// How the connection is encrypted, as PostgreSQL's `sslmode` names it (the modes
    /// postgres-nio offers).
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never TLS.
        case disable
        /// TLS when the server offers it, else plain.
        case prefer
        /// TLS or no connection; the server's certificate is verified against the system's roots.
        case require
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    /// The most connections one service instance opens (each opened when a request needs it and
    /// none is free, then kept open: ``PostgresConnectionPool``).
    public var poolSize: Int
    /// Whether the instance tells the other instances of its writes (``PostgresChangeBus``), as
    /// it should. `false` measures what that costs: the others' subscribers then learn of this
    /// instance's writes from their once-a-second sweep.
    public var announcesChanges = true

    /// A location from its parts.
    public init(
        host: String, port: Int = 5432, user: String, password: String? = nil, database: String,
        tls: TLSMode = .prefer, poolSize: Int = 20
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
        self.poolSize = poolSize
    }

    /// Whether `text` names a PostgreSQL database rather than a file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
    public init(
        url text: String, poolSize: Int = 20, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(TableServiceError) {
        let example = "postgres://USER@HOST:5432/DATABASE"
        guard Self.isURL(text), let components = URLComponents(string: text), let host = components.host,
            !host.isEmpty
        else {
            throw .invalidConfiguration("'\(text)' is not a PostgreSQL URL; write it as \(example).")
        }
        guard let user = components.user, !user.isEmpty else {
            throw .invalidConfiguration("The PostgreSQL URL names no user; write it as \(example).")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw .invalidConfiguration("The PostgreSQL URL names no database after the port; write it as \(example).")
        }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw .invalidConfiguration(
                    "The PostgreSQL URL has the option '\(item.name)'; the only one understood is sslmode.")
            }
            guard let mode = TLSMode(rawValue: item.value ?? "") else {
                throw .invalidConfiguration(
                    "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")); "
                        + "'\(item.value ?? "")' is not.")
            }
            tls = mode
        }
        guard poolSize >= 1 else {
            throw .invalidConfiguration("The connection pool needs at least 1 connection; \(poolSize) is too few.")
        }
        self.init(
            host: host, port: components.port ?? 5432, user: components.user?.removingPercentEncoding ?? user,
            password: components.password?.removingPercentEncoding ?? environment["PGPASSWORD"],
            database: database.removingPercentEncoding ?? database, tls: tls, poolSize: poolSize)
    }

    /// The URL without its password, for logs and messages.
    public var displayURL: String {
        "postgres://\(user)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }
}
