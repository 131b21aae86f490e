import Foundation
import HTTPServer
import SyncClient
import Views

/// Everything a dashboard needs to start.
public struct DashboardConfiguration: Sendable {
    /// Which table service the dashboard syncs with.
    public enum Remote: Sendable, Equatable {
        /// A table service inside the dashboard's own server (`/tables`, its page at `/service`),
        /// with its database in the data folder.
        case embedded
        /// Another service, such as `todosync serve` or an official Mobile Apps server.
        case url(URL, applicationKey: String?)
    }

    public var host: String
    public var port: Int
    /// Holds the local store (`store.sqlite`), the embedded service's database and the settings.
    public var dataDirectory: URL
    public var resources: ResourceFolders
    /// The remote from the command line; `nil` keeps the one saved in the settings (embedded at first).
    public var remote: Remote?
    /// Shown in the title and header, such as "Device A" in the demo.
    public var deviceName: String?
    /// Logs one line per request when true.
    public var logRequests: Bool
    /// A page of the remote service to link from the header (the demo's shared service page).
    public var servicePageURL: String?
    /// Host names answered besides the address and the loopback names (others get 421).
    public var allowedHosts: [String]
    /// A signed-in user's token for the remote (`X-ZUMO-AUTH`), saved in the store; nil keeps the saved one.
    public var authToken: String?
    /// What becomes of queued changes when ``remote`` is another service than the store's; nil
    /// refuses to start with such a switch while changes are queued (see ``RemoteSwitchChoice``).
    public var onRemoteSwitch: RemoteSwitchChoice?
    /// How many operations a push keeps on the wire at once (see ``SyncConfiguration/pushWindow``),
    /// saved in the settings; nil keeps the saved one (16 at first).
    public var pushWindow: Int?
    /// The tables to sync and show (`--table`), saved in the store; nil keeps the saved ones
    /// (`todoitem` at first).
    public var tables: [String]?
    /// The table protocol (see ``SyncConfiguration/tableProtocol``), saved in the settings; nil keeps
    /// the saved one (`auto` at first).
    public var tableProtocol: ProtocolChoice?
    /// Serves the store as an opened support bundle (`todosync open-bundle`): every request but
    /// GET, HEAD and OPTIONS gets 403, the remote and settings are left as the bundle has them,
    /// and nothing ever syncs.
    public var isReadOnlyBundle = false
    /// Seconds between automatic syncs (`--auto-sync`; 0: off), saved in the settings; nil keeps the
    /// saved one (off at first). See ``AutoSync``.
    public var autoSyncInterval: Double?
    /// The intervals auto-sync takes, in seconds (0 turns it off): what `--auto-sync`, the Settings
    /// field and `/api/settings` accept.
    public static let autoSyncRange = 5...86_400
    /// The rows per pull request that the Settings field, `/api/settings` and `client pull --page-size`
    /// accept.
    public static let pageSizeRange = 1...1000

    /// Auto-sync's backoff and debounce (tests shorten them).
    var autoSyncTiming = AutoSyncSchedule.Timing()
    /// How often an open page's stream gets a heartbeat, which also notices a page that went away
    /// (tests shorten it).
    var heartbeatInterval: Duration = .seconds(15)
    /// Whether auto-sync follows the remote's change channel (`--live`).
    public var live: LiveMode = .auto
    /// How the token is sent to the remote (`--auth-style`), saved in the store; nil keeps the saved one.
    public var authStyle: AuthStyle?
    /// A command that prints the token (`--auth-token-command`); its tokens stay in memory.
    public var authTokenCommand: TokenCommand?
    /// CAs the sync client trusts besides the system's (`--ca-file`).
    public var caFile: String?
    /// Lets the sync client send the key and the token in plain HTTP to another machine (`--allow-plain-http`).
    public var allowPlainHTTP = false
    /// Serves HTTPS with this certificate and key (`--tls-cert`, `--tls-key`); the embedded service's
    /// sync client then trusts `tlsCertificateFile` (or ``caFile``), so the certificate must name
    /// 127.0.0.1 or the address bound.
    public var tls: TLSIdentity?
    /// The certificate file behind ``tls``, trusted by the dashboard's own sync client.
    public var tlsCertificateFile: String?
    /// Tokens of `--access-token-file`, with their roles: off loopback they sign in as often as needed.
    public var accessTokens: [String: AccessRole] = [:]
    /// Whether every request needs a session (see ``AccessGate``): bound to any address but loopback.
    public var asksWhoYouAre: Bool { !BrowserAddress.isLoopback(host) }
    /// The clock auto-sync plans by and sessions and sign-in links expire by (tests move it).
    var clock: any WallClock = SystemWallClock()

    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL, resources: ResourceFolders,
        remote: Remote? = nil, deviceName: String? = nil, logRequests: Bool = false, servicePageURL: String? = nil,
        allowedHosts: [String] = [], authToken: String? = nil, onRemoteSwitch: RemoteSwitchChoice? = nil,
        pushWindow: Int? = nil, tables: [String]? = nil, tableProtocol: ProtocolChoice? = nil
    ) {
        self.tables = tables
        self.tableProtocol = tableProtocol
        self.pushWindow = pushWindow
        self.onRemoteSwitch = onRemoteSwitch
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.resources = resources
        self.remote = remote
        self.deviceName = deviceName
        self.logRequests = logRequests
        self.servicePageURL = servicePageURL
        self.allowedHosts = allowedHosts
        self.authToken = authToken
    }
}
