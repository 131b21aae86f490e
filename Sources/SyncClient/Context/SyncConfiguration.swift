import Foundation

/// How a ``SyncContext`` talks to its remote table service.
public struct SyncConfiguration: Sendable {
    /// The service's base address (`http://127.0.0.1:8080`); nil keeps the one saved in the store.
    public var remoteURL: URL?
    /// Sent as `X-ZUMO-APPLICATION` when set; nil keeps the one saved in the store.
    public var applicationKey: String?
    /// A signed-in user's token, sent as ``authStyle`` says when set; nil keeps the one saved in the
    /// store, an empty string removes it.
    public var authToken: String?
    /// How the token is sent (`X-ZUMO-AUTH` or `Authorization: Bearer`); nil keeps the one saved in
    /// the store (at first: as the protocol's own clients send it, see ``AuthStyle/usual(for:)``).
    public var authStyle: AuthStyle?
    /// A command whose output is the token (`--auth-token-command`), run when a token is first
    /// needed, after a 401 and a minute before a JWT's `exp`; its tokens stay in memory. Takes the
    /// place of ``authToken``.
    public var authTokenCommand: TokenCommand?
    /// A PEM file of CAs to trust besides the system's (`--ca-file`), for a service with a
    /// certificate of your own CA or a development certificate.
    public var caFile: String?
    /// Sends the key and the token in plain HTTP to another machine too (`--allow-plain-http`);
    /// refused by default, as anyone on the way could read them. Loopback is always allowed.
    public var allowPlainHTTP = false
    /// Longest wait, in seconds, for the next byte of an answer (its head or any part of its body);
    /// 30 by default. A service that stops sending ends the request with ``StopReason/stalled(seconds:)``.
    public var idleTimeout: TimeInterval
    /// Longest time, in seconds, for one whole request, from sending it to the last byte of the answer;
    /// 60 by default. Longer ends it with ``StopReason/tooSlow(seconds:)``, also for a service that
    /// trickles bytes to stay under the idle deadline.
    public var requestTimeout: TimeInterval
    /// The conflict policy of every table that has none saved in the store (merge by default).
    public var conflictPolicy: ConflictPolicy
    /// How many operations push keeps on the wire at once, 1 to ``maximumPushWindow``; 16 by
    /// default. Operations start in queue order and two operations of the same item never overlap;
    /// 1 sends them strictly one by one in queue order. Over a link with a round trip of tens of
    /// milliseconds, a window of 16 pushes about 16 times as fast as 1.
    public var pushWindow: Int
    /// What becomes of queued changes when ``remoteURL`` is another service than the one the store
    /// is bound to; nil refuses such a switch while changes are queued (see ``RemoteSwitchChoice``).
    public var onRemoteSwitch: RemoteSwitchChoice?
    /// The table protocol to speak: v2 (Mobile Apps) by default, v3 (Datasync), or `auto`, which asks
    /// the service before the first sync and keeps its answer with the remote. Another protocol than
    /// the one the store last synced with reads every row again at the next pull, as another remote does.
    public var tableProtocol: ProtocolChoice
    /// How a push or pull sends a request again when its connection dropped (4 times, after 50 ms,
    /// 100 ms, 200 ms and 400 ms, by default).
    public var connectionRetry: ConnectionRetry
    /// What the deadlines, the pauses before a resend and a token command's deadline read: the
    /// system's clock by default; a test gives one it moves.
    public var clock: any WallClock = SystemWallClock()

    /// A configuration; every argument has a default.
    public init(
        remoteURL: URL? = nil, applicationKey: String? = nil, idleTimeout: TimeInterval = 30,
        requestTimeout: TimeInterval = 60, conflictPolicy: ConflictPolicy = .merge,
        pushWindow: Int = SyncConfiguration.defaultPushWindow,
        authToken: String? = nil, onRemoteSwitch: RemoteSwitchChoice? = nil, tableProtocol: ProtocolChoice = .v2,
        connectionRetry: ConnectionRetry = ConnectionRetry()
    ) {
        self.connectionRetry = connectionRetry
        self.onRemoteSwitch = onRemoteSwitch
        self.tableProtocol = tableProtocol
        self.remoteURL = remoteURL
        self.applicationKey = applicationKey
        self.authToken = authToken
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.conflictPolicy = conflictPolicy
        self.pushWindow = Self.clampedPushWindow(pushWindow)
    }

    /// The push window when none is given.
    public static let defaultPushWindow = 16
    /// The largest push window.
    public static let maximumPushWindow = 64

    /// `window` within 1 and ``maximumPushWindow``.
    public static func clampedPushWindow(_ window: Int) -> Int { min(maximumPushWindow, max(1, window)) }
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
