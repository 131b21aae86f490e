/// Readies the transport a push, a pull, a verify or a pushed decision runs on — the one place
/// that decides whether a job may speak to the service: none in offline mode or without an
/// address; with ``ProtocolChoice/auto`` and no protocol found out yet, the service is asked which
/// one it speaks; a service that went back in time since the last sync is reconciled with first
/// (``Reconciler/reconcileIfRestored(_:table:asking:)``), except by a verify, which only reads.
struct TransportGate: Sendable {
    /// What the transport is readied for: it decides the table that asks which protocol the service
    /// speaks and whether a restored service is reconciled with first.
    enum Use: Sendable {
        /// A push (or a pushed decision): the protocol is asked with the table of the first queued
        /// operation; the service's epoch is asked before anything is sent.
        case push
        /// A pull of `table`: the epoch is learnt from its pages when not known yet.
        case pull(table: String)
        /// A verify of `table`: reads only, so a restored service is not reconciled with.
        case verify(table: String)
    }

    let remote: Remote
    let queue: SyncOperationQueue
    let reconciler: Reconciler

    /// The transport for `use`, or the reason there is none: ``StopReason/offline``,
    /// ``SyncError/noRemote``, or what the protocol probe or the reconcile stopped on.
    func ready(for use: Use) async throws(SyncError) -> HTTPTransport {
        if remote.monitor.offline { throw .stopped(.offline) }
        guard let transport = remote.transport else { throw .noRemote }
        var ready = transport
        if let probeTable = try await probeTable(use) {
            ready = try await remote.speaking(transport, table: probeTable)
        }
        switch use {
        case .push:
            // A push must know the epoch before it sends anything.
            try await reconciler.reconcileIfRestored(ready, table: nil, asking: true)
        case .pull(let table):
            // A pull learns the epoch from its first page (``SyncError/serviceWentBack(_:)``).
            try await reconciler.reconcileIfRestored(ready, table: table, asking: false)
        case .verify:
            break
        }
        return ready
    }

    /// The table to ask which protocol the service speaks: the pulled or verified table, else (a
    /// push) the table of the first queued operation — one the service has, unlike `todoitem` in an
    /// app without it. Nil when a push finds the protocol known or nothing queued.
    private func probeTable(_ use: Use) async throws(SyncError) -> String? {
        switch use {
        case .pull(let table), .verify(let table): return table
        case .push:
            guard remote.monitor.tableProtocol == nil else { return nil }
            return try await remote.store.asyncRead { [queue] db in try queue.firstSendableTable(db) }
        }
    }
}
