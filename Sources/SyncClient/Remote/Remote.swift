import Foundation
import GRDB
import Synchronization

/// The service a ``SyncContext`` syncs with: its address and binding, the application key and the
/// token (kept beside the store, never in it), the trust settings, and the transport every request
/// goes through.
///
/// The transport is the one piece that changes: it is made again, whole, when the address, the token,
/// its style or the protocol changes, and sits behind a small lock; a job reads it when it starts, so
/// a change takes effect from the next request.
final class Remote: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    let monitor: SyncMonitor
    let recorder: FlightRecorder
    let installationID: String
    let reporting: DeviceReporting
    /// The application key and the token, kept beside the store, never in it.
    let credentialsFile: CredentialsFile
    /// Tokens from ``SyncConfiguration/authTokenCommand``, in memory only.
    let tokenSupply: TokenSupply?
    /// CAs trusted besides the system's (``SyncConfiguration/caFile``).
    let caFile: String?
    /// See ``SyncConfiguration/allowPlainHTTP``.
    let allowPlainHTTP: Bool
    /// The deadlines of every request (see ``SyncConfiguration/idleTimeout`` and ``SyncConfiguration/requestTimeout``).
    let deadlines: ExchangeDeadlines
    private let current = Mutex<HTTPTransport?>(nil)

    /// What opening the store found of its remote, read in the opening transaction.
    struct Opening {
        var change: RemoteChange?
        var spoken: TableProtocol?
        var address: String?
        var style: AuthStyle?
        var lastSync: String?
    }

    /// The remote of the store at `path`: the credentials are moved out of an older store into their
    /// file, and the key and token `configuration` gives are saved there.
    init(
        path: String, store: LocalStore, queue: SyncOperationQueue, monitor: SyncMonitor, recorder: FlightRecorder,
        installationID: String, reporting: DeviceReporting, configuration: SyncConfiguration
    ) throws(SyncError) {
        (self.store, self.queue, self.monitor, self.recorder) = (store, queue, monitor, recorder)
        (self.installationID, self.reporting) = (installationID, reporting)
        credentialsFile = CredentialsFile(store: path)
        tokenSupply = configuration.authTokenCommand.map { TokenSupply($0, clock: configuration.clock) }
        caFile = configuration.caFile
        allowPlainHTTP = configuration.allowPlainHTTP
        deadlines = ExchangeDeadlines(
            idle: configuration.idleTimeout, total: configuration.requestTimeout, clock: configuration.clock)
        var credentials = try Self.moveCredentials(out: store, into: credentialsFile)
        if let key = configuration.applicationKey { credentials.applicationKey = key.isEmpty ? nil : key }
        if let token = configuration.authToken { credentials.authToken = token.isEmpty ? nil : token }
        if configuration.applicationKey != nil || configuration.authToken != nil {
            try credentialsFile.save(credentials)
        }
        monitor.protocolChoice = configuration.tableProtocol
        monitor.authTokenHint = credentials.authToken.map(AuthTokenHint.init)
    }

    /// Binds the store to the remote `configuration` names (or to the one it saved), in the opening
    /// transaction.
    func open(_ db: Database, _ configuration: SyncConfiguration) throws -> Opening {
        let binding = RemoteBinding(store: store, queue: queue)
        var opening = Opening()
        if let url = configuration.remoteURL {
            opening.change = try binding.point(db, to: url, choice: configuration.onRemoteSwitch)
        } else {
            try binding.bindSavedAddress(db)
        }
        if case .switched = opening.change { try store.setConfig(db, Self.protocolKey, nil) }
        opening.spoken = try Self.bindProtocol(db, store: store, to: configuration.tableProtocol)
        if let style = configuration.authStyle { try store.setConfig(db, Self.authStyleKey, style.rawValue) }
        opening.address = try binding.address(db)
        opening.style = try store.config(db, Self.authStyleKey, as: AuthStyle.self)
        opening.lastSync = try store.config(db, Self.lastSyncKey)
        return opening
    }

    /// Takes what ``open(_:_:)`` found: the monitor's figures and the transport.
    func connect(_ opening: Opening) throws(SyncError) {
        monitor.tableProtocol = opening.spoken
        monitor.remote = opening.address
        if let last = opening.lastSync?.data(using: .utf8) {
            monitor.lastSync = try? SyncContext.decoder.decode(SyncSummary.self, from: last)
        }
        let credentials = try credentialsFile.load()
        let transport = opening.address.flatMap(URL.init(string:)).map {
            makeTransport(
                to: $0, applicationKey: credentials.applicationKey, authToken: credentials.authToken,
                style: opening.style, speaking: opening.spoken)
        }
        current.withLock { $0 = transport }
    }

    /// The transport of the next request; nil without an address (or once the context closed).
    var transport: HTTPTransport? { current.withLock { $0 } }

    /// The transport to `url` with these credentials: the one place a context makes one.
    private func makeTransport(
        to url: URL, applicationKey: String?, authToken: String?, style: AuthStyle?, speaking spoken: TableProtocol?
    ) -> HTTPTransport {
        HTTPTransport(
            baseURL: url, applicationKey: applicationKey, authToken: authToken, authStyle: style,
            tokenSupply: tokenSupply, caFile: caFile, allowPlainHTTP: allowPlainHTTP, deadlines: deadlines,
            tableProtocol: spoken ?? .v2, recorder: recorder, installationID: installationID, reporting: reporting)
    }

    /// Replaces the transport by what `change` makes of it (under the lock).
    func changeTransport(_ change: (HTTPTransport?) -> HTTPTransport?) {
        current.withLock { $0 = change($0) }
    }

    /// See ``SyncContext/setRemote(url:applicationKey:service:onSwitch:)``. A switch to another
    /// service stops the running job of `jobs` first.
    func setRemote(
        url: URL?, applicationKey: String?, service: ServiceIdentity?, onSwitch: RemoteSwitchChoice?, jobs: JobSlot
    ) async throws(SyncError) -> RemoteChange {
        let binding = RemoteBinding(store: store, queue: queue)
        if let url {
            let identity = RemoteBinding.identity(of: url, named: service)
            if try store.read({ db in try binding.isSwitch(db, to: identity, choice: onSwitch) }) {
                // Nothing the old service sends may land after the switch.
                await jobs.stopRunningJob()
            }
        }
        var credentials = try credentialsFile.load()
        credentials.applicationKey = applicationKey.flatMap { $0.isEmpty ? nil : $0 }
        try credentialsFile.save(credentials)
        let token = credentials.authToken
        let (change, spoken, style) = try await store.asyncWrite { [store, choice = monitor.protocolChoice] db in
            let change = try binding.point(db, to: url, service: service, choice: onSwitch)
            if case .switched = change { try store.setConfig(db, Self.protocolKey, nil) }
            let spoken = try Self.bindProtocol(db, store: store, to: choice)
            return (change, spoken, try store.config(db, Self.authStyleKey, as: AuthStyle.self))
        }
        monitor.tableProtocol = spoken
        if case .switched = change { monitor.lastSync = nil }
        monitor.remote = url?.absoluteString
        let transport = url.map {
            makeTransport(to: $0, applicationKey: applicationKey, authToken: token, style: style, speaking: spoken)
        }
        current.withLock { $0 = transport }
        return change
    }

    /// See ``SyncContext/setAuthToken(_:)``.
    func setAuthToken(_ token: String?) throws(SyncError) {
        let token = token.flatMap { $0.isEmpty ? nil : $0 }
        var credentials = try credentialsFile.load()
        credentials.authToken = token
        try credentialsFile.save(credentials)
        changeTransport { $0.map { $0.signedIn(token: token, style: $0.authStyle) } }
        monitor.authTokenHint = token.map(AuthTokenHint.init)
    }

    /// See ``SyncContext/setAuthStyle(_:)``.
    func setAuthStyle(_ style: AuthStyle?) async throws(SyncError) {
        try await store.asyncWrite { [store] db in try store.setConfig(db, Self.authStyleKey, style?.rawValue) }
        changeTransport { $0.map { $0.signedIn(token: $0.authToken, style: style) } }
    }

    /// The style saved by ``setAuthStyle(_:)``; nil: the usual one of the protocol spoken.
    var authStyleChoice: AuthStyle? {
        (try? store.read { [store] db in try store.config(db, Self.authStyleKey, as: AuthStyle.self) }) ?? nil
    }

    static let authStyleKey = "authStyle"

    /// The application key sent to the remote; nil when none is set.
    var applicationKey: String? { (try? credentialsFile.load())?.applicationKey }

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

    /// Where the last sync's summary is kept in `__config`.
    static let lastSyncKey = "lastSync"

    /// Keeps `summary` as the last sync's (in the monitor and the store), with the epoch this store
    /// first synced in.
    func recordLastSync(_ summary: SyncSummary) async {
        monitor.lastSync = summary
        let seen = transport?.epochs.epoch
        if let data = try? SyncContext.encoder.encode(summary) {
            let text = String(decoding: data, as: UTF8.self)
            _ = try? await store.asyncWrite { [store] db in
                try store.setConfig(db, Self.lastSyncKey, text)
                // The epoch this store first synced in: what a later change of epoch is measured against.
                if let seen, try store.config(db, Reconciler.epochKey) == nil {
                    try store.setConfig(db, Reconciler.epochKey, seen.header)
                }
            }
        }
    }

    /// Drops the transport: the context is closing.
    func close() {
        current.withLock { $0 = nil }
    }
}
