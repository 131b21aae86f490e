import Foundation
import GRDB
import SyncProtocol

/// The offline sync client: one SQLite store, the operation queue, and the remote table service.
///
/// Local reads and writes never touch the network and never wait for a running sync. `push()`,
/// `pull` and Use Client run one at a time: a second caller of the same job joins the running one.
///
/// ```swift
/// let context = try SyncContext(path: "todo.sqlite", configuration: .init(remoteURL: url))
/// let todo = context.table("todoitem")
/// try todo.insert(["text": "buy milk", "complete": false])
/// let result = try await context.push()
/// try await todo.pull(queryId: "all")
/// ```
public actor SyncContext {
    nonisolated let store: LocalStore
    nonisolated let queue: SyncOperationQueue
    nonisolated let monitor = SyncMonitor()
    /// Every exchange with the service, kept in the store (see ``exchanges(_:)``).
    nonisolated let recorder: FlightRecorder
    /// This store's installation id (a UUID kept in the store), sent as `X-ZUMO-INSTALLATION-ID`.
    public nonisolated let installationID: String
    /// What this device tells a todosync service's fleet view: its queue, and its support bundle
    /// when the service's admin asks (give the bundle's maker with
    /// ``DeviceReporting/onBundleRequest(_:)``).
    public nonisolated let reporting: DeviceReporting
    /// The deadlines of every request (see ``SyncConfiguration/idleTimeout`` and ``SyncConfiguration/requestTimeout``).
    nonisolated let deadlines: ExchangeDeadlines
    /// The conflict policy of tables that have none saved (see ``conflictPolicy(for:)``).
    public nonisolated let defaultConflictPolicy: ConflictPolicy
    /// How many operations push keeps on the wire at once (see ``SyncConfiguration/pushWindow``).
    public private(set) var pushWindow: Int
    /// How a push or pull sends a request again after a dropped connection.
    nonisolated let connectionRetry: ConnectionRetry
    var transport: HTTPTransport?
    /// The application key and the token, kept beside the store, never in it.
    nonisolated let credentialsFile: CredentialsFile
    /// Tokens from ``SyncConfiguration/authTokenCommand``, in memory only.
    nonisolated let tokenSupply: TokenSupply?
    /// CAs trusted besides the system's (``SyncConfiguration/caFile``).
    nonisolated let caFile: String?
    /// See ``SyncConfiguration/allowPlainHTTP``.
    nonisolated let allowPlainHTTP: Bool
    /// The protocol chosen for the remote (see ``SyncConfiguration/tableProtocol``).
    public nonisolated var protocolChoice: ProtocolChoice { monitor.protocolChoice }
    /// The protocol in use; nil while `auto` has not asked the service yet.
    public nonisolated var tableProtocol: TableProtocol? { monitor.tableProtocol }
    /// What opening with ``SyncConfiguration/remoteURL`` did to the store's binding (nil: opened
    /// without an address): a switch says which rows went and which changes were kept.
    public nonisolated let openingChange: RemoteChange?
    /// The one job it runs at a time: what runs, Cancel, and what observers hear of each job.
    public nonisolated let jobs: JobSlot

    /// Opens (creating if needed) the store at `path`, with `todoitem`, the given tables and every
    /// table the store held already.
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` for a table whose name cannot be one.
    public init(
        path: String, tables: [TableDescription] = [], configuration: SyncConfiguration = .init()
    )
        throws(SyncError)
    {
        var described = [TableDescription.todoItem]
        for table in tables {
            if let index = described.firstIndex(where: { $0.name == table.name }) {
                described[index] = table
            } else {
                described.append(table)
            }
        }
        store = try LocalStore(path: path, tables: described)
        queue = SyncOperationQueue(store: store)
        recorder = FlightRecorder(store: store)
        jobs = JobSlot(ending: { [recorder] in await recorder.flush() })
        installationID = try Self.installationID(of: store)
        reporting = DeviceReporting { [store, queue] in Self.reportedFigures(store: store, queue: queue) }
        deadlines = ExchangeDeadlines(
            idle: configuration.idleTimeout, total: configuration.requestTimeout, clock: configuration.clock)
        defaultConflictPolicy = configuration.conflictPolicy
        pushWindow = configuration.pushWindow
        connectionRetry = configuration.connectionRetry
        let store = self.store
        let queue = self.queue
        let binding = RemoteBinding(store: store, queue: queue)
        credentialsFile = CredentialsFile(store: path)
        tokenSupply = configuration.authTokenCommand.map { TokenSupply($0, clock: configuration.clock) }
        caFile = configuration.caFile
        allowPlainHTTP = configuration.allowPlainHTTP
        var credentials = try Self.moveCredentials(out: store, into: credentialsFile)
        if let key = configuration.applicationKey { credentials.applicationKey = key.isEmpty ? nil : key }
        if let token = configuration.authToken { credentials.authToken = token.isEmpty ? nil : token }
        if configuration.applicationKey != nil || configuration.authToken != nil {
            try credentialsFile.save(credentials)
        }
        let saved: (remote: String?, offline: Bool, last: String?, style: AuthStyle?)
        var change: RemoteChange?
        var spoken: TableProtocol?
        monitor.protocolChoice = configuration.tableProtocol
        saved = try store.write { db in
            if let url = configuration.remoteURL {
                change = try binding.point(db, to: url, choice: configuration.onRemoteSwitch)
            } else {
                try binding.bindSavedAddress(db)
            }
            if case .switched = change { try store.setConfig(db, Self.protocolKey, nil) }
            spoken = try Self.bindProtocol(db, store: store, to: configuration.tableProtocol)
            if let style = configuration.authStyle { try store.setConfig(db, Self.authStyleKey, style.rawValue) }
            try queue.recoverInterrupted(db)
            return (
                try binding.address(db), try store.config(db, "offline") == "true",
                try store.config(db, Self.lastSyncKey),
                try store.config(db, Self.authStyleKey, as: AuthStyle.self)
            )
        }
        openingChange = change
        monitor.tableProtocol = spoken
        monitor.offline = saved.offline
        monitor.remote = saved.remote
        monitor.authTokenHint = credentials.authToken.map(AuthTokenHint.init)
        if let last = saved.last?.data(using: .utf8) {
            monitor.lastSync = try? Self.decoder.decode(SyncSummary.self, from: last)
        }
        if let remote = saved.remote, let url = URL(string: remote) {
            transport = HTTPTransport(
                baseURL: url, applicationKey: credentials.applicationKey, authToken: credentials.authToken,
                authStyle: saved.style, tokenSupply: tokenSupply, caFile: caFile, allowPlainHTTP: allowPlainHTTP,
                deadlines: deadlines, tableProtocol: spoken ?? .v2, recorder: recorder, installationID: installationID,
                reporting: reporting)
        }
    }

    /// The table named `name`; it must have been described (when the context was opened, by
    /// ``describe(_:)``, or by an earlier run on the same store).
    public nonisolated func table(_ name: String) -> SyncTable {
        SyncTable(context: self, name: name)
    }

    /// Adds the table `name` to the store, with no column yet (pulls and edits add them), or returns
    /// it as the store holds it. Each table has its own delta tokens, policy and counts.
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` unless the name is 1 to 64 letters, digits and
    ///   underscores, not starting with a digit or `__`.
    @discardableResult
    public nonisolated func describe(_ name: String) async throws(SyncError) -> TableDescription {
        try await describe(TableDescription(name: name, columns: []))
    }

    /// Adds `table` to the store, or adds the columns of `table` it lacks (the columns it has keep
    /// their types). Returns the table as the store now holds it.
    @discardableResult
    public nonisolated func describe(_ table: TableDescription) async throws(SyncError) -> TableDescription {
        try LocalStore.checkTableName(table.name)
        if let held = store.tables[table.name], table.columns.allSatisfy({ held.columnType($0.name) != nil }) {
            return held
        }
        let described = try await write { [store] db in try store.describe(db, table) }
        if let index = store.listIndexes[table.name] { store.listIndexer.catchUp(index, in: store.pool) }
        return described
    }

    /// The table `name` as the store holds it now (its columns grow as pulls and edits bring new ones).
    public nonisolated func description(of name: String) throws(SyncError) -> TableDescription {
        try store.description(of: name)
    }

    /// The described tables, by name.
    public nonisolated var tables: [TableDescription] {
        store.tables.values.sorted { $0.name < $1.name }
    }

    /// The path of the SQLite file.
    public nonisolated var path: String { store.pool.path }

    // MARK: Settings

    /// Turns offline mode on or off (saved in the store). Offline, edits queue and push/pull refuse;
    /// turning it on cancels a running push, pull or Use Client (it stops with ``StopReason/cancelled``).
    public nonisolated func setOffline(_ offline: Bool) async throws(SyncError) {
        try await write { [store] db in try store.setConfig(db, "offline", offline ? "true" : nil) }
        monitor.offline = offline
        if offline { jobs.cancel() }
    }

    /// Whether offline mode is on.
    public nonisolated var isOffline: Bool { monitor.offline }

    /// Points the context at a service (or, with nil, at none), saved in the store; takes effect for
    /// the next request.
    ///
    /// The store is bound to one service (see ``ServiceIdentity``): pointing it at another removes the
    /// rows of the old one and every delta token, after cancelling a running sync, so that the next
    /// pull brings exactly the new service's rows. While changes are queued such a switch is refused
    /// with ``SyncError/remoteSwitchRefused(_:)`` unless `onSwitch` says what becomes of them.
    ///
    /// - Parameters:
    ///   - service: the service's identity when its address does not say it (nil: the address).
    ///   - onSwitch: push the queued changes to the new service, or discard them.
    @discardableResult
    public func setRemote(
        url: URL?, applicationKey: String?, service: ServiceIdentity? = nil, onSwitch: RemoteSwitchChoice? = nil
    ) async throws(SyncError) -> RemoteChange {
        let binding = RemoteBinding(store: store, queue: queue)
        if let url {
            let identity = RemoteBinding.identity(of: url, named: service)
            if try read({ db in try binding.isSwitch(db, to: identity, choice: onSwitch) }) {
                // Nothing the old service sends may land after the switch.
                await jobs.stopRunningJob()
            }
        }
        var credentials = try credentialsFile.load()
        credentials.applicationKey = applicationKey.flatMap { $0.isEmpty ? nil : $0 }
        try credentialsFile.save(credentials)
        let token = credentials.authToken
        let (change, spoken, style) = try await write { [store, protocolChoice] db in
            let change = try binding.point(db, to: url, service: service, choice: onSwitch)
            if case .switched = change { try store.setConfig(db, Self.protocolKey, nil) }
            let spoken = try Self.bindProtocol(db, store: store, to: protocolChoice)
            return (change, spoken, try store.config(db, Self.authStyleKey, as: AuthStyle.self))
        }
        monitor.tableProtocol = spoken
        if case .switched = change { monitor.lastSync = nil }
        monitor.remote = url?.absoluteString
        transport = url.map {
            HTTPTransport(
                baseURL: $0, applicationKey: applicationKey, authToken: token, authStyle: style,
                tokenSupply: tokenSupply, caFile: caFile, allowPlainHTTP: allowPlainHTTP, deadlines: deadlines,
                tableProtocol: spoken ?? .v2, recorder: recorder, installationID: installationID,
                reporting: reporting)
        }
        return change
    }

    /// The service the store is bound to (see ``setRemote(url:applicationKey:service:onSwitch:)``); nil
    /// when it has synced with none yet.
    public nonisolated func boundService() throws(SyncError) -> ServiceIdentity? {
        try read { [store, queue] db in try RemoteBinding(store: store, queue: queue).service(db) }
    }

    /// Sets (or, with nil or "", removes) the signed-in user's token (sent as ``authStyle`` says);
    /// saved in the store, used from the next request. The token is never logged or shown in full.
    public func setAuthToken(_ token: String?) throws(SyncError) {
        let token = token.flatMap { $0.isEmpty ? nil : $0 }
        var credentials = try credentialsFile.load()
        credentials.authToken = token
        try credentialsFile.save(credentials)
        transport = transport.map { $0.signedIn(token: token, style: $0.authStyle) }
        monitor.authTokenHint = token.map(AuthTokenHint.init)
    }

    /// The credentials kept beside the store; an older store held them in its `__config`: they are
    /// moved to the file, and the store is vacuumed and its WAL emptied, so that no byte of the store
    /// keeps them.
    private static func moveCredentials(
        out store: LocalStore, into file: CredentialsFile
    ) throws(SyncError) -> Credentials {
        var credentials = try file.load()
        let old = try store.read { db in
            Credentials(
                applicationKey: try store.config(db, "applicationKey"), authToken: try store.config(db, "authToken"))
        }
        guard !old.isEmpty else { return credentials }
        credentials.applicationKey = credentials.applicationKey ?? old.applicationKey
        credentials.authToken = credentials.authToken ?? old.authToken
        try file.save(credentials)
        do {
            try store.pool.write { db in
                try store.setConfig(db, "applicationKey", nil)
                try store.setConfig(db, "authToken", nil)
            }
            try store.pool.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch { throw .storage(StoreFailure(error)) }
        return credentials
    }

    /// Sets how the token is sent (nil: as the protocol's own clients send it, see
    /// ``AuthStyle/usual(for:)``); saved in the store, used from the next request.
    public func setAuthStyle(_ style: AuthStyle?) async throws(SyncError) {
        try await write { [store] db in try store.setConfig(db, Self.authStyleKey, style?.rawValue) }
        transport = transport.map { $0.signedIn(token: $0.authToken, style: style) }
    }

    /// How the token is sent: the style saved, else the usual one of the protocol spoken.
    public nonisolated var authStyle: AuthStyle {
        authStyleChoice ?? .usual(for: monitor.tableProtocol ?? .v2)
    }

    /// The style saved by ``setAuthStyle(_:)``; nil: the usual one of the protocol spoken.
    public nonisolated var authStyleChoice: AuthStyle? {
        (try? read { [store] db in try store.config(db, Self.authStyleKey, as: AuthStyle.self) }) ?? nil
    }

    static let authStyleKey = "authStyle"

    /// The application key sent to the remote (kept beside the store, never in it); nil when none is set.
    public nonisolated var applicationKey: String? { (try? credentialsFile.load())?.applicationKey }

    /// How the saved auth token may be shown: never in full (see ``AuthTokenHint``); nil when none is set.
    public nonisolated var authTokenHint: AuthTokenHint? { monitor.authTokenHint }

    /// The remote service's address, if one is set.
    public nonisolated var remoteURL: String? { monitor.remote }

    /// Changes how many operations the following pushes keep on the wire at once (see
    /// ``SyncConfiguration/pushWindow``).
    public func setPushWindow(_ window: Int) {
        pushWindow = SyncConfiguration.clampedPushWindow(window)
    }

    // MARK: Progress and status

    /// What is running now (push/pull and counts); never waits.
    public nonisolated var progress: SyncProgress { monitor.progress }

    /// Every change of ``progress`` (the current value first) until the caller stops listening.
    public nonisolated func progressUpdates() -> AsyncStream<SyncProgress> { monitor.updates() }

    /// The last push or pull's outcome.
    public nonisolated var lastSync: SyncSummary? { monitor.lastSync }

    /// Pending, conflict and failed counts plus progress, from one small query.
    public nonisolated func status() throws(SyncError) -> SyncStatus {
        let (counts, held, revoked) = try read { [queue, store] db in
            (try queue.counts(db), try queue.heldCounts(db), try Self.revokedAccess(store, db))
        }
        // A held operation is counted as held only, whatever its state underneath.
        let pending =
            counts.filter(\.key.isWaiting).values.reduce(0, +) - held.filter(\.key.isWaiting).values.reduce(0, +)
        return SyncStatus(
            pending: pending, conflicts: counts[.conflict] ?? 0, failed: (counts[.failed] ?? 0) - (held[.failed] ?? 0),
            held: held.values.reduce(0, +), operations: counts.values.reduce(0, +), offline: monitor.offline,
            remoteURL: monitor.remote,
            tableProtocol: monitor.tableProtocol, progress: monitor.progress, lastSync: monitor.lastSync,
            revokedAccess: revoked)
    }

    /// Where the last sync's summary is kept in `__config`.
    static let lastSyncKey = "lastSync"

    func recordLastSync(_ summary: SyncSummary) async {
        monitor.lastSync = summary
        let seen = transport?.epochs.epoch
        if let data = try? Self.encoder.encode(summary) {
            let text = String(decoding: data, as: UTF8.self)
            _ = try? await store.asyncWrite { [store] db in
                try store.setConfig(db, Self.lastSyncKey, text)
                // The epoch this store first synced in: what a later change of epoch is measured against.
                if let seen, try store.config(db, Self.epochKey) == nil {
                    try store.setConfig(db, Self.epochKey, seen.header)
                }
            }
        }
    }

    static let encoder = JSONEncoder.todosync()
    static let decoder = JSONDecoder.todosync()

    // MARK: Database helpers

    nonisolated func read<T>(_ body: (Database) throws -> T) throws(SyncError) -> T {
        try store.read(body)
    }

    /// Runs `body` in a write transaction while the calling task is suspended: the commit syncs the
    /// disk (`synchronous = FULL`), which may take seconds when the disk is busy, and no cooperative
    /// thread waits for it (on a two-core machine two waiting writes would stall every other task).
    nonisolated func write<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(SyncError) -> T {
        try await store.asyncWrite(body)
    }

    /// Closes the store's connections; the context must not be used afterwards.
    public func close() throws(SyncError) {
        monitor.finishAll()
        store.changes.finishAll()
        transport = nil
        recorder.flushNow()
        store.listIndexer.stop()
        do { try store.pool.close() } catch { throw .storage(StoreFailure(error)) }
    }
}
