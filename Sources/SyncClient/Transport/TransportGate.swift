/// Readies the transport a push, a pull or a pushed decision runs on: none in offline mode or
/// without an address; with ``ProtocolChoice/auto`` and no protocol found out yet, the service is
/// asked which one it speaks; a service that went back in time since the last sync is reconciled
/// with first (``Reconciler/reconcileIfRestored(_:table:asking:)``).
struct TransportGate: Sendable {
    let remote: Remote
    let queue: SyncOperationQueue
    let reconciler: Reconciler

    /// The transport, or the reason there is none (offline mode, no address), kept as the last
    /// sync's summary. The protocol is asked with one row of `table` (a push asks with the table of
    /// its first operation).
    func ready(_ kind: SyncSummary.Kind, table: String?) async throws(SyncError) -> HTTPTransport {
        do throws(SyncError) {
            if remote.monitor.offline { throw .stopped(.offline) }
            guard let transport = remote.transport else { throw .noRemote }
            var ready = transport
            if let probeTable = try await probeTable(table) {
                ready = try await remote.speaking(transport, table: probeTable)
            }
            // A pull learns the epoch from its first page (``SyncError/serviceWentBack(_:)``); a push
            // must know it before it sends anything.
            try await reconciler.reconcileIfRestored(ready, table: table, asking: kind == .push)
            return ready
        } catch {
            await remote.recordLastSync(SyncSummary(kind, table: table, ended: error))
            throw error
        }
    }

    /// The table to ask which protocol the service speaks: `table`, else (a push) the table of the
    /// first queued operation — one the service has, unlike `todoitem` in an app without it. Nil
    /// when the protocol is known or nothing is queued.
    private func probeTable(_ table: String?) async throws(SyncError) -> String? {
        if let table { return table }
        guard remote.monitor.tableProtocol == nil else { return nil }
        return try await remote.store.asyncRead { [queue] db in try queue.firstSendableTable(db) }
    }
}
