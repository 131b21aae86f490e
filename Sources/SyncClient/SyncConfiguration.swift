import Foundation

/// How conflicts met during push are resolved.
public enum ConflictPolicy: String, Sendable, Codable, CaseIterable {
    /// Conflicts wait for the user (Use Client / Use Server / Cancel). The default.
    case manual
    /// The server's version replaces the local change at once.
    case serverWins
    /// The local change is sent again over the server's version (once per push).
    case clientWins
}

/// How a ``SyncContext`` talks to its remote table service.
public struct SyncConfiguration: Sendable {
    /// The service's base address (`http://127.0.0.1:8080`); nil keeps the one saved in the store.
    public var remoteURL: URL?
    /// Sent as `X-ZUMO-APPLICATION` when set; nil keeps the one saved in the store.
    public var applicationKey: String?
    /// Seconds to wait for an answer before a request counts as timed out.
    public var requestTimeout: TimeInterval
    /// How conflicts met during push are resolved (manual by default).
    public var conflictPolicy: ConflictPolicy
    /// Operations push keeps on the wire at once. 1 (the default) sends them strictly one by one in
    /// queue order; more starts them in queue order but lets the server answer several at a time
    /// (two operations of the same item never overlap). Use it when items do not depend on each other.
    public var pushConcurrency: Int

    /// A configuration; every argument has a default.
    public init(
        remoteURL: URL? = nil, applicationKey: String? = nil, requestTimeout: TimeInterval = 30,
        conflictPolicy: ConflictPolicy = .manual, pushConcurrency: Int = 1
    ) {
        self.remoteURL = remoteURL
        self.applicationKey = applicationKey
        self.requestTimeout = requestTimeout
        self.conflictPolicy = conflictPolicy
        self.pushConcurrency = min(16, max(1, pushConcurrency))
    }
}

/// How a pull pages through the server's rows.
public struct PullSettings: Sendable, Hashable {
    /// Rows per request (`$top`): 1 to 1000, 50 by default.
    public var pageSize: Int

    /// Settings with `pageSize` clamped to 1...1000.
    public init(pageSize: Int = 50) {
        self.pageSize = min(1000, max(1, pageSize))
    }
}
