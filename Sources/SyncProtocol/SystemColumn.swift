import HTTPTypes

/// The columns every table of the protocol has, which only the server writes (except `id`).
public enum SystemColumn {
    public static let id = "id"
    public static let version = "version"
    public static let createdAt = "createdAt"
    public static let updatedAt = "updatedAt"
    public static let deleted = "deleted"

    /// All of them, in the order the official server writes them.
    public static let all = [id, createdAt, updatedAt, version, deleted]
    /// The ones a client may not send (the server answers 400).
    public static let serverOwned: Set<String> = [createdAt, updatedAt, deleted]

    /// The 2015 Mobile Services name of a column (`version` → `__version`); `id` keeps its name.
    public static func legacyName(_ column: String) -> String {
        column == id ? id : "__" + column
    }
}

/// HTTP header names of the protocol.
public enum ProtocolHeader {
    /// The protocol version a client speaks; also accepted as a query argument of the same name.
    public static let apiVersion = HTTPField.Name("ZUMO-API-VERSION")!
    public static let applicationKey = HTTPField.Name("X-ZUMO-APPLICATION")!
    /// A signed-in user's token (a JWT), as Mobile Apps clients send it.
    public static let authToken = HTTPField.Name("X-ZUMO-AUTH")!
    /// The installation (one app on one device) that sends a request, as the Mobile Apps and
    /// Datasync clients send it: a UUID kept with the client's store.
    public static let installationID = HTTPField.Name("X-ZUMO-INSTALLATION-ID")!
    /// What a todosync client says of itself to the service's fleet view, which only it knows:
    /// `queue=3, oldest=120, conflicts=1` (operations queued, seconds since the oldest was made,
    /// conflicts waiting for a person). Optional; other clients do not send it.
    public static let clientState = HTTPField.Name("X-TodoSync-Client-State")!
    /// Set to `1` on the service's answers to a device whose support bundle an admin asked for:
    /// a todosync client then uploads its redacted bundle to `/devices/{id}/bundle`.
    public static let bundleRequest = HTTPField.Name("X-TodoSync-Bundle-Request")!
    /// On every answer of a todosync service: which life of its data answered (``ServiceEpoch``).
    /// A todosync client that sees it change reconciles its rows with the service.
    public static let epoch = HTTPField.Name("X-TodoSync-Epoch")!
}
