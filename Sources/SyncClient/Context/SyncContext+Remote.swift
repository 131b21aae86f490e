import Foundation

/// The service the context syncs with: its address, the credentials, the protocol, and what the
/// context asks of it besides a sync (all in ``Remote``).
extension SyncContext {
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
        try await remote.setRemote(
            url: url, applicationKey: applicationKey, service: service, onSwitch: onSwitch, jobs: jobs)
    }

    /// The service the store is bound to (see ``setRemote(url:applicationKey:service:onSwitch:)``); nil
    /// when it has synced with none yet.
    public nonisolated func boundService() throws(SyncError) -> ServiceIdentity? {
        try read { [store, queue] db in try RemoteBinding(store: store, queue: queue).service(db) }
    }

    /// Sets (or, with nil or "", removes) the signed-in user's token (sent as ``authStyle`` says);
    /// saved in the store, used from the next request. The token is never logged or shown in full.
    public func setAuthToken(_ token: String?) throws(SyncError) {
        try remote.setAuthToken(token)
    }

    /// Sets how the token is sent (nil: as the protocol's own clients send it, see
    /// ``AuthStyle/usual(for:)``); saved in the store, used from the next request.
    public func setAuthStyle(_ style: AuthStyle?) async throws(SyncError) {
        try await remote.setAuthStyle(style)
    }

    /// How the token is sent: the style saved, else the usual one of the protocol spoken.
    public nonisolated var authStyle: AuthStyle {
        authStyleChoice ?? .usual(for: monitor.tableProtocol ?? .v2)
    }

    /// The style saved by ``setAuthStyle(_:)``; nil: the usual one of the protocol spoken.
    public nonisolated var authStyleChoice: AuthStyle? { remote.authStyleChoice }

    /// The application key sent to the remote (kept beside the store, never in it); nil when none is set.
    public nonisolated var applicationKey: String? { remote.applicationKey }

    /// How the saved auth token may be shown: never in full (see ``AuthTokenHint``); nil when none is set.
    public nonisolated var authTokenHint: AuthTokenHint? { monitor.authTokenHint }

    /// The remote service's address, if one is set.
    public nonisolated var remoteURL: String? { monitor.remote }

    /// Speaks `choice` from now on (waiting for a running sync to end first): another protocol than
    /// the store last spoke reads every row again at the next pull; `auto` keeps the one found out or
    /// chosen before, or asks the service at the next sync.
    public func setTableProtocol(_ choice: ProtocolChoice) async throws(SyncError) {
        await jobs.waitUntilIdle()
        try await remote.setTableProtocol(choice)
    }

    /// Whether the service answers at all now: one `GET` of no rows of the first table, where any
    /// HTTP answer counts (an error status too) and only a failure to get one does not. Auto-sync
    /// asks this every few seconds while it backs off after the service was unreachable, so that it
    /// syncs as soon as the service is back instead of at the end of a long backoff. Never in
    /// offline mode; never writes the store (the exchange is in the flight recorder).
    public func remoteAnswers() async -> Bool {
        await remote.answers(table: tables.first?.name ?? TableDescription.todoItem.name)
    }

    /// Options for a protocol doctor run on the service this store syncs with, carrying what its
    /// syncs send (the key, the token or its command, how the token is sent) and trust (the CA file,
    /// plain HTTP allowed or not), so that a secured service is probed as it is synced; nil when the
    /// store has no remote.
    public nonisolated func doctorOptions(table: String, readOnly: Bool) -> ProtocolDoctor.Options? {
        remote.doctorOptions(table: table, readOnly: readOnly)
    }

    /// Follows the remote's change channel for `table` until the task is cancelled: `changed` runs
    /// after each change the service announces to this client (and at once when the client is
    /// behind on connecting or reconnecting), for the caller to pull. A dropped stream is opened
    /// again with a growing pause (½ s doubling to 30 s), resumed from the last cursor it saw, so
    /// nothing is missed; `connected` tells when the stream goes up or down.
    ///
    /// A cursor the service refuses (its database is another one now: restored from a backup) is
    /// dropped: the stream is opened again from the service's present, after `changed` (the
    /// client pulls what it may have missed).
    ///
    /// In offline mode, or without a remote, it waits and looks again. A refused sign-in ends it
    /// (asking again with the same token would only hammer the service). A remote without the
    /// channel is asked once while the context is open, and again for another address: not kept in
    /// the store, since a service may offer the channel after a restart or an upgrade.
    public nonisolated func followChanges(
        of table: String, connected: @escaping @Sendable (Bool) -> Void = { _ in },
        changed: @escaping @Sendable () async -> Void
    ) async -> FollowEnd {
        await remote.followChanges(of: table, connected: connected, changed: changed)
    }

    /// What the last reconcile with a restored service found; nil when the service never went back
    /// in time while this store synced with it (see ``Reconciler``).
    public nonisolated func restoreNotice() throws(SyncError) -> RestoreNotice? { try reconciler.notice() }

    /// The conflicts a restore made that still wait for a decision: rows gone from the service, and
    /// rows it holds older values of.
    public nonisolated func restoreConflictCounts() throws(SyncError) -> (gone: Int, older: Int) {
        try reconciler.conflictCounts()
    }

    /// What this store did about the revocation of its access; nil when its access is not revoked
    /// (see ``RevocationSettlement``).
    public nonisolated func revokedAccess() throws(SyncError) -> RevokedAccess? { try revocation.saved() }
}
