import Foundation

/// How a ``SyncContext`` talks to its remote table service.
public struct SyncConfiguration: Sendable {
    /// The service's base address (`http://127.0.0.1:8080`); nil keeps the one saved in the store.
    public var remoteURL: URL?
    /// Sent as `X-ZUMO-APPLICATION` when set; nil keeps the one saved in the store.
    public var applicationKey: String?
    /// A signed-in user's token, sent as `X-ZUMO-AUTH` when set; nil keeps the one saved in the
    /// store, an empty string removes it.
    public var authToken: String?
    /// Longest wait, in seconds, for the next byte of an answer (its head or any part of its body);
    /// 30 by default. A service that stops sending ends the request with ``StopReason/stalled(seconds:)``.
    public var idleTimeout: TimeInterval
    /// Longest time, in seconds, for one whole request, from sending it to the last byte of the answer;
    /// 60 by default. Longer ends it with ``StopReason/tooSlow(seconds:)``, also for a service that
    /// trickles bytes to stay under the idle deadline.
    public var requestTimeout: TimeInterval
    /// The conflict policy of every table that has none saved in the store (merge by default).
    public var conflictPolicy: ConflictPolicy
    /// Operations push keeps on the wire at once. 1 (the default) sends them strictly one by one in
    /// queue order; more starts them in queue order but lets the server answer several at a time
    /// (two operations of the same item never overlap). Use it when items do not depend on each other.
    public var pushConcurrency: Int
    /// What becomes of queued changes when ``remoteURL`` is another service than the one the store
    /// is bound to; nil refuses such a switch while changes are queued (see ``RemoteSwitchChoice``).
    public var onRemoteSwitch: RemoteSwitchChoice?

    /// A configuration; every argument has a default.
    public init(
        remoteURL: URL? = nil, applicationKey: String? = nil, idleTimeout: TimeInterval = 30,
        requestTimeout: TimeInterval = 60, conflictPolicy: ConflictPolicy = .merge, pushConcurrency: Int = 1,
        authToken: String? = nil, onRemoteSwitch: RemoteSwitchChoice? = nil
    ) {
        self.onRemoteSwitch = onRemoteSwitch
        self.remoteURL = remoteURL
        self.applicationKey = applicationKey
        self.authToken = authToken
        self.idleTimeout = idleTimeout
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
