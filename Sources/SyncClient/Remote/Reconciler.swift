import Foundation
import GRDB
import SyncProtocol

/// Reconciles the store with a service that went back in time: restored from a backup, it answers
/// with a new ``ServiceEpoch`` (`X-TodoSync-Epoch`). Its rows may be older than this store's, and rows this store synced may be
/// gone from it, while every delta token points past its newest row. Before the next push or pull,
/// the store reconciles:
///
/// 1. its queue is kept, and pushed after the reconcile as usual;
/// 2. each synced table is read again from the service by keyset on `id`, trusting no delta token;
/// 3. each row this store synced that the service no longer has becomes a conflict "gone from the
///    service" (``OperationErrorKind/goneFromService``), and each row the service holds older values
///    of becomes a conflict of the local values against the restored ones
///    (``OperationErrorKind/restoredOlder``) — both decided like any other (``RestoreRule``);
/// 4. rows the service changed since, or that are new here, are taken in as a pull takes them;
/// 5. nothing is deleted silently. The history records the event per table, and
///    ``SyncContext/restoreNotice()`` tells the dashboard's banner.
///
/// A service that sends no epoch (the official servers, an older todosync) is synced as before.
struct Reconciler: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    let monitor: SyncMonitor

    /// The epoch this store last synced in (`__config`), as its header value.
    static let epochKey = "serviceEpoch"
    /// The ``RestoreNotice`` of the last reconcile, as JSON.
    static let restoreNoticeKey = "restoreNotice"

    /// See ``SyncContext/restoreNotice()``.
    func notice() throws(SyncError) -> RestoreNotice? {
        try store.read { [store] db in
            try store.config(db, Self.restoreNoticeKey).flatMap {
                try? SyncContext.decoder.decode(RestoreNotice.self, from: Data($0.utf8))
            }
        }
    }

    /// See ``SyncContext/restoreConflictCounts()``.
    func conflictCounts() throws(SyncError) -> (gone: Int, older: Int) {
        try store.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.kind, count(*) FROM __errors e JOIN __operations o ON o.id = e.operationId
                    WHERE o.state = 'conflict' AND e.kind IN (?, ?) GROUP BY e.kind
                    """,
                arguments: [OperationErrorKind.goneFromService.rawValue, OperationErrorKind.restoredOlder.rawValue])
            var counts = (gone: 0, older: 0)
            for row in rows {
                if row[0] == OperationErrorKind.goneFromService.rawValue {
                    counts.gone = row[1]
                } else {
                    counts.older = row[1]
                }
            }
            return counts
        }
    }

    /// Reconciles before a push or pull when the service's epoch is not the one this store synced in.
    /// The epoch is known from any earlier answer in this process; otherwise, when `asking` (a push,
    /// which must not send before it knows), one small request asks, only of a service that sent an
    /// epoch before.
    func reconcileIfRestored(_ transport: HTTPTransport, table: String?, asking: Bool = false) async throws(SyncError) {
        let saved = try await store.asyncRead { [store] db in try store.config(db, Self.epochKey) }
            .flatMap(ServiceEpoch.init(header:))
        var seen = transport.epochs.epoch
        if seen == nil, saved != nil, asking {
            let probe = table ?? store.tables.keys.min() ?? TableDescription.todoItem.name
            _ = try await transport.send(
                .get, transport.path(table: probe), query: [("$top", "0")], for: .epochProbe(table: probe))
            seen = transport.epochs.epoch
        }
        guard let seen, let saved, seen.id != saved.id else { return }
        do {
            try await reconcile(with: seen, transport)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(error)
        }
    }

    /// Reads every synced table again and settles each row as ``RestoreRule`` says, then saves the
    /// new epoch: a reconcile cut short is done again whole by the next push or pull.
    private func reconcile(with epoch: ServiceEpoch, _ transport: HTTPTransport) async throws {
        monitor.update {
            $0 = SyncProgress(activity: .reconciling, table: nil, done: 0, total: nil, startedAt: Date())
        }
        defer { monitor.update { $0 = .idle } }
        var found: [String: ReconcileCounts] = [:]
        for table in try store.syncedTables() {
            guard let description = store.tables[table] else { continue }
            found[table] = try await reconcile(description, transport: transport)
        }
        let total = found.values.reduce(ReconcileCounts(), +)
        let notice = RestoreNotice(
            epoch: epoch, reconciledAt: Date(), gone: total.gone, older: total.older, taken: total.taken)
        let saved = String(decoding: try SyncContext.encoder.encode(notice), as: UTF8.self)
        try await store.asyncWrite { [store, queue, found] db in
            for (table, counts) in found.sorted(by: { $0.key < $1.key }) {
                try queue.history.recordTableEvent(
                    db, .serviceRestored, table: table,
                    detail: "the service went back to "
                        + (epoch.restoredTo.map { ProtocolDate.format(milliseconds: $0) } ?? "an earlier state")
                        + ": \(counts.gone) rows gone from it, \(counts.older) older there (conflicts to decide), "
                        + "\(counts.taken) taken from it")
            }
            try store.setConfig(db, Self.restoreNoticeKey, saved)
            try store.setConfig(db, Self.epochKey, epoch.header)
        }
    }

    /// Pass 1 reads the service's rows by id (the next page on the wire while one is settled, as in
    /// a pull), settling each against the local copy; pass 2 finds the local rows the service did
    /// not send. The table's delta tokens then stand at the service's newest row as it was before
    /// pass 1 (rows written since are pulled again, never missed).
    private func reconcile(_ table: TableDescription, transport: HTTPTransport) async throws -> ReconcileCounts {
        var counts = ReconcileCounts()
        let newest = try await newestRow(of: table, transport: transport)
        let scratch = try VerifyScratch()
        defer { scratch.remove() }
        try await transport.readRowsById(
            table.name, layout: { [store] in store.catalog.committed[table.name]?.layout ?? PageLayout(table) },
            pageSize: Self.reconcilePageSize, counting: false,
            purpose: { .reconcile(table: table.name, page: $0) }
        ) { rows, ids, _ in
            guard !ids.isEmpty else { return }
            let settled = try await store.asyncWrite { [store, queue] db in
                try Self.settle(
                    rows, of: table.name, restoredTo: transport.epochs.epoch, store: store, queue: queue, db)
            }
            counts = counts + settled
            try scratch.remember(ids)
            monitor.update { $0.done += ids.count }
        }
        counts.gone += try await settleRowsOnlyHere(table, scratch: scratch, restoredTo: transport.epochs.epoch)
        try await store.asyncWrite { [store] db in
            for state in try store.deltaTokenStates(db) where state.table == table.name {
                if let newest {
                    try store.saveDeltaToken(db, newest, table: table.name, queryId: state.queryId, rows: 0)
                } else {
                    try store.removeDeltaToken(db, table: table.name, queryId: state.queryId)
                }
            }
        }
        return counts
    }

    /// The service's newest row of `table`, deleted ones included, as a delta token (nil: none).
    private func newestRow(of table: TableDescription, transport: HTTPTransport) async throws -> DeltaToken? {
        let reply = try await transport.send(
            .get, transport.path(table: table.name),
            query: [
                ("$orderby", "updatedAt desc,id desc"), ("$top", "1"), ("$select", "id,updatedAt"),
                (transport.tableProtocol.includeDeletedParameter, "true"),
            ], for: .reconcile(table: table.name, page: 0))
        try reply.checkPage(table: table.name)
        guard let row = try PageLayout(table).decode(reply.body).rows.first, let updatedAt = row.updatedAt else {
            return nil
        }
        return DeltaToken(updatedAt: updatedAt, id: row.id)
    }

    /// Pass 2: the local rows the service did not send, each a conflict unless a queued change
    /// (an insert not pushed yet, say) settles it.
    private func settleRowsOnlyHere(
        _ table: TableDescription, scratch: VerifyScratch, restoredTo epoch: ServiceEpoch?
    ) async throws -> Int {
        var after = ""
        var gone = 0
        while true {
            try Task.checkCancellation()
            let start = after
            let ids = try await store.asyncRead { db in
                try String.fetchAll(
                    db, sql: "SELECT id FROM \(table.name.quotedSQLName) WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [start, Self.reconcilePageSize])
            }
            guard let last = ids.last else { return gone }
            let unseen = try scratch.unseen(ids)
            if !unseen.isEmpty {
                gone += try await store.asyncWrite { [store, queue] db in
                    let queued = try queue.itemIds(db, table: table.name)
                    var made = 0
                    for (id, local) in try store.readItems(db, table: table, ids: Array(unseen)) {
                        guard
                            RestoreRule.decide(local: Self.copy(local), service: nil, queued: queued.contains(id))
                                == .goneFromService
                        else { continue }
                        try Self.recordConflict(
                            .goneFromService, table: table, local: local, server: nil, epoch: epoch, queue: queue, db)
                        made += 1
                    }
                    return made
                }
            }
            after = last
        }
    }

    /// Rows per page of a reconcile's reads.
    static let reconcilePageSize = 1000
}
