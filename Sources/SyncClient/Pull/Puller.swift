import Foundation
import SyncProtocol

/// Runs the pull job of one table: finds the remote ready, reads the pages from the saved delta
/// token (through a ``PullRunner``), writes each one with the token after it, and reconciles first
/// when the service went back in time under the pull.
struct Puller: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    let monitor: SyncMonitor
    /// Readies the transport of each pull.
    let gate: TransportGate
    /// How a page is asked for again after a dropped connection.
    let connectionRetry: ConnectionRetry

    /// The pull job: finds the remote ready (in the job: that may take long, a probe, and Cancel
    /// stops jobs), then reads the pages. Returns what it received, and the error that stopped it
    /// before the end (nil: it ran to the end).
    func run(
        _ table: String, query: TableQuery?, queryId: String?, settings: PullSettings
    ) async -> (result: PullResult, error: SyncError?) {
        // A table the store does not hold yet is added by the transaction of its first page.
        let description = store.tables[table] ?? TableDescription(name: table, columns: [])
        let table = description.name
        var result = PullResult(table: table)
        do throws(SyncError) {
            let transport = try await gate.ready(for: .pull(table: table))
            monitor.update {
                $0 = SyncProgress(activity: .pulling, table: table, done: 0, total: nil, startedAt: Date())
            }
            defer {
                monitor.update { $0 = .idle }
                // Pulled pages leave their rows uncounted and out of the search index: the list index
                // catches up now, in the background.
                if let index = store.listIndexes[table] { store.listIndexer.catchUp(index, in: store.pool) }
            }
            var error: SyncError?
            (result, error) = await pullPages(
                description, query: query, queryId: queryId, settings: settings, transport: transport)
            if case .serviceWentBack? = error {
                // Restored under this pull: reconcile, then pull from where the reconcile left the token.
                try await gate.reconciler.reconcileIfRestored(transport, table: table)
                (result, error) = await pullPages(
                    description, query: query, queryId: queryId, settings: settings, transport: transport)
            }
            if let error { throw error }
            if store.tables[table] == nil {
                // The service's table is empty: the store holds it now all the same.
                try await store.asyncWrite { [store] db in _ = try store.describe(db, description) }
            }
            return (result, nil)
        } catch {
            return (result, error)
        }
    }

    /// Reads the pages of a pull from the saved token; stops with ``SyncError/serviceWentBack(_:)``
    /// when a page comes from another epoch than the one this store synced in.
    private func pullPages(
        _ table: TableDescription, query: TableQuery?, queryId: String?, settings: PullSettings,
        transport: HTTPTransport
    ) async -> (PullResult, SyncError?) {
        let token: DeltaToken?
        let epoch: ServiceEpoch?
        do {
            (token, epoch) = try await store.asyncRead { [store] db in
                (
                    try queryId.flatMap { try store.deltaToken(db, table: table.name, queryId: $0) },
                    try store.config(db, Reconciler.epochKey).flatMap(ServiceEpoch.init(header:))
                )
            }
        } catch {
            return (PullResult(table: table.name), error)
        }
        let runner = pullRunner(
            table, query: query, queryId: queryId, settings: settings, transport: transport, epoch: epoch)
        return await runner.run(PullRun(cursor: PullCursor(table: table.name, token: token ?? DeltaToken())))
    }

    /// The pull's runner: how one page is asked for (a dropped connection asks again, a few times,
    /// after a pause) and how it is written with the token after it.
    private func pullRunner(
        _ table: TableDescription, query: TableQuery?, queryId: String?, settings: PullSettings,
        transport: HTTPTransport, epoch: ServiceEpoch?
    ) -> PullRunner {
        let path = transport.path(table: table.name)
        let predicate = query?.predicate
        return PullRunner(
            fetch: { number, token, counting throws(SyncError) in
                let spoken = transport.tableProtocol
                let filter = [query?.odataFilter, token.filter(in: spoken)].compactMap { $0 }
                    .joined(separator: " and ")
                var parameters: [(String, String)] = []
                if !filter.isEmpty { parameters.append(("$filter", filter)) }
                parameters.append(("$orderby", token.skip == nil ? "updatedAt,id" : "updatedAt"))
                if let skip = token.skip, skip > 0 { parameters.append(("$skip", String(skip))) }
                parameters.append(("$top", String(settings.pageSize)))
                parameters.append((spoken.includeDeletedParameter, "true"))
                if counting { parameters.append(spoken.countParameter) }
                let reply = try await connectionRetry.run(on: transport.deadlines.clock) { () throws(SyncError) in
                    try await transport.send(
                        .get, path, query: parameters, for: .pull(table: table.name, queryId: queryId, page: number))
                }
                try reply.checkPage(table: table.name)
                if let epoch, let seen = reply.headers[ProtocolHeader.epoch].flatMap(ServiceEpoch.init(header:)),
                    seen.id != epoch.id
                {
                    throw .serviceWentBack(seen)
                }
                // The layout as the table is now: a column an earlier page brought is decoded in place.
                let layout = store.catalog.committed[table.name]?.layout ?? PageLayout(table)
                let (rows, total) = try layout.decode(reply.body)
                return PullRunner.Page(
                    number: number, tokenBefore: token, rows: rows, total: total, body: reply.body,
                    columnChanges: ColumnChanges(header: reply.headers[ProtocolHeader.columnChanges]))
            },
            write: { page, tokenAfter throws(SyncError) in
                try await store.asyncWrite { db in
                    // A column this page brings is added by the transaction that stores the page.
                    if store.catalog.entry(table.name, for: db) == nil { try store.describe(db, table) }
                    // A column the service renamed is renamed here first, so the page fills it (read
                    // again when that changed the table's layout).
                    var decoded = page.rows
                    if !page.columnChanges.isEmpty {
                        let before = try store.description(of: table.name, in: db)
                        let after = try store.follow(db, table.name, page.columnChanges, queue: queue)
                        if after.columns != before.columns { decoded = try PageLayout(after).decode(page.body).0 }
                    }
                    let (table, rows) = try store.widen(db, table.name, forPulled: decoded)
                    if let predicate, let outside = try PageWriter.firstRow(of: rows, outside: predicate, in: table, db)
                    {
                        throw SyncError.serviceFault(.rowOutsideQuery(table: table.name, rowId: outside))
                    }
                    let pending = try queue.itemIds(db, table: table.name)
                    let counts = try PageWriter.apply(rows, to: table, keeping: pending, in: db)
                    try queue.history.recordPullPage(
                        db, table: table.name, queryId: queryId, page: page.number, tokenBefore: page.tokenBefore,
                        tokenAfter: tokenAfter, rows: PageWriter.pulledRows(rows, keeping: pending))
                    if let queryId {
                        try store.saveDeltaToken(db, tokenAfter, table: table.name, queryId: queryId, rows: rows.count)
                    }
                    return counts
                }
            },
            progress: { run in
                monitor.update {
                    if let total = run.total { $0.total = total }
                    $0.done = run.result.received
                }
            })
    }
}
