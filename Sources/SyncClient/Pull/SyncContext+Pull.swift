import Foundation
import GRDB
import Storage
import SyncProtocol

/// What a pull did.
public struct PullResult: Sendable, Hashable, Codable {
    /// Rows the server sent.
    public var received = 0
    /// Rows written into the local table.
    public var written = 0
    /// Local rows removed because the server deleted them.
    public var deleted = 0
    /// Rows left alone because they have a queued local change.
    public var skippedPending = 0
    /// Requests made.
    public var pages = 0
    /// Operations pushed first (the table had pending changes).
    public var pushed: PushResult?

    /// An empty result.
    public init() {}
}

/// What writing one pulled page did.
struct PageCounts: Sendable, Equatable {
    var written = 0
    var deleted = 0
    var skipped = 0
}

extension SyncContext {
    /// Brings the server's rows of `table` (matching `query`'s predicate) into the local table.
    ///
    /// Pushes first when the table has pending operations (a push job, then the pull job); never
    /// overwrites rows that still have a queued change; removes rows the server deleted. With a
    /// `queryId` the pull is incremental: it asks only for rows changed since the saved delta
    /// token, which is saved with each page.
    public func pull(
        _ table: String, query: TableQuery? = nil, queryId: String? = nil, settings: PullSettings = PullSettings()
    ) async throws -> PullResult {
        if store.tables[table] == nil { try LocalStore.checkTableName(table) }
        let waiting = try await store.asyncRead { [queue] db in try queue.sendableCount(db, table: table) }
        let pushed = waiting > 0 ? try await push() : nil
        guard
            case .pulled(var result) = try await run(
                .pull(table: table, query: query, queryId: queryId, settings: settings))
        else { preconditionFailure("a pull ends pulled") }
        result.pushed = pushed
        return result
    }

    /// The pull job: finds the remote ready (in the job: that may take long, a probe, and Cancel
    /// stops jobs), then reads the pages.
    func runPull(
        _ table: String, query: TableQuery?, queryId: String?, settings: PullSettings
    ) async throws -> PullResult {
        // A table the store does not hold yet is added by the transaction of its first page.
        let description = store.tables[table] ?? TableDescription(name: table, columns: [])
        let transport = try await readyTransport(.pull, table: table)
        let table = description.name
        monitor.update { $0 = SyncProgress(activity: .pulling, table: table, done: 0, total: nil, startedAt: Date()) }
        defer {
            monitor.update { $0 = .idle }
            // Pulled pages leave their rows uncounted and out of the search index: the list index
            // catches up now, in the background.
            if let index = store.listIndexes[table] { store.listIndexer.catchUp(index, in: store.pool) }
        }
        var (result, error) = await pullPages(
            description, query: query, queryId: queryId, settings: settings, transport: transport)
        if case .serviceWentBack? = error {
            // Restored under this pull: reconcile, then pull from where the reconcile left the token.
            try await reconcileIfRestored(transport, table: table)
            (result, error) = await pullPages(
                description, query: query, queryId: queryId, settings: settings, transport: transport)
        }
        if let error {
            await recordLastSync(SyncSummary(.pull, table: table, ended: error, pulled: result.received))
            throw error
        }
        if store.tables[table] == nil {
            // The service's table is empty: the store holds it now all the same.
            try await store.asyncWrite { [store] db in _ = try store.describe(db, description) }
        }
        await recordLastSync(SyncSummary(.pull, table: table, ended: nil, pulled: result.received))
        return result
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
                    try store.config(db, Self.epochKey).flatMap(ServiceEpoch.init(header:))
                )
            }
        } catch {
            return (PullResult(), error)
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
        let (store, queue, monitor, connectionRetry) = (store, queue, monitor, connectionRetry)
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
                try Self.checkPage(reply, table: table.name)
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
                    if let predicate, let outside = try Self.firstRow(of: rows, outside: predicate, in: table, db) {
                        throw SyncError.serviceFault(.rowOutsideQuery(table: table.name, rowId: outside))
                    }
                    let pending = try queue.itemIds(db, table: table.name)
                    let counts = try Self.apply(rows, to: table, keeping: pending, in: db)
                    try queue.history.recordPullPage(
                        db, table: table.name, queryId: queryId, page: page.number, tokenBefore: page.tokenBefore,
                        tokenAfter: tokenAfter, rows: Self.pulledRows(rows, keeping: pending))
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

    /// The id of the first pulled row that does not satisfy `predicate`, judged by SQLite with the
    /// same SQL as local queries; nil when every row does.
    static func firstRow(
        of rows: [PulledRow], outside predicate: TableQuery.Predicate, in table: TableDescription, _ db: Database
    ) throws -> String? {
        let (condition, conditionArguments) = try TableQuery(where: predicate).sqlWhere(table)
        let columns = table.allColumns.map(\.name.quotedSQLName).joined(separator: ", ")
        let row = "(" + sqlParameters(table.allColumns.count) + ")"
        // In chunks, under SQLite's limit on bound parameters.
        let perChunk = max(1, 30_000 / max(1, table.allColumns.count))
        for start in stride(from: 0, to: rows.count, by: perChunk) {
            let chunk = rows[start..<min(start + perChunk, rows.count)]
            let values = Array(repeating: row, count: chunk.count).joined(separator: ", ")
            let sql =
                "WITH page(\(columns)) AS (VALUES \(values)) SELECT id FROM page EXCEPT SELECT id FROM page\(condition)"
            var arguments: [DatabaseValue] = chunk.flatMap(\.values)
            arguments += conditionArguments
            if let id = try String.fetchOne(db, sql: sql + " LIMIT 1", arguments: StatementArguments(arguments)) {
                return id
            }
        }
        return nil
    }

    /// A page answer that is not a success, as the error that stops the pull (or verify) reading pages.
    static func checkPage(_ reply: HTTPReply, table: String) throws(SyncError) {
        guard reply.status.kind != .successful else { return }
        if let reason = PushDecision.stopReason(status: reply.status, message: reply.message) {
            throw .stopped(reason)
        }
        if reply.status == .notFound { throw .serviceHasNoTable(table) }
        throw .badResponse("HTTP \(reply.status.code): \(reply.message)")
    }

    /// Writes one page in the caller's transaction, with prepared statements; rows of the `pending`
    /// items (those with a queued local change) are left alone. Rows are upserted several at a time
    /// (``valuesPerUpsert``): one statement per row spent as much time building and running the
    /// statement as SQLite spent writing the row.
    static func apply(
        _ rows: [PulledRow], to table: TableDescription, keeping pending: Set<String>, in db: Database
    ) throws -> PageCounts {
        let delete = try db.cachedStatement(sql: "DELETE FROM \(table.name.quotedSQLName) WHERE id = ?")
        let perStatement = max(1, valuesPerUpsert / table.allColumns.count)
        var counts = PageCounts()
        var waiting: [DatabaseValue] = []
        func upsertWaiting() throws {
            guard !waiting.isEmpty else { return }
            let upserted = waiting.count / table.allColumns.count
            let sql = table.upsertSQL(rows: upserted)
            // A full statement serves every page; a shorter one (before a delete, a page's end) is made for once.
            let statement = try upserted == perStatement ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
            try statement.execute(arguments: StatementArguments(positional: waiting))
            counts.written += upserted
            waiting.removeAll(keepingCapacity: true)
        }
        for row in rows {
            guard let id = row.id else { continue }
            if pending.contains(id) {
                counts.skipped += 1
            } else if row.deleted {
                // In order: a row written earlier in the page goes before it is deleted.
                try upsertWaiting()
                try delete.execute(arguments: [id])
                counts.deleted += 1
            } else {
                waiting += row.values
                if waiting.count >= perStatement * table.allColumns.count { try upsertWaiting() }
            }
        }
        try upsertWaiting()
        return counts
    }

    /// What ``apply(_:to:keeping:in:)`` does to each row, as the history keeps it.
    static func pulledRows(_ rows: [PulledRow], keeping pending: Set<String>) -> PulledRows {
        var pulled = PulledRows()
        for row in rows {
            guard let id = row.id else { continue }
            pulled.append(
                id: id, version: row.version,
                kind: pending.contains(id) ? .pullSkipped : row.deleted ? .pulledDelete : .pulled)
        }
        return pulled
    }

    /// At most this many values are bound to one upsert statement (SQLite allows 32,766); 7,000
    /// measured no faster than 1,000.
    static let valuesPerUpsert = 1_000

    /// Removes local rows matching `query` (all rows when nil) and the table's delta tokens.
    /// Refused while the table has queued operations, unless `force`, which drops them with their errors.
    @discardableResult
    nonisolated func purge(
        _ table: String, query: TableQuery? = nil, force: Bool = false
    ) async throws(SyncError) -> Int {
        let description = try store.description(of: table)
        let (filter, arguments) = try (query ?? .all).sqlWhere(description)
        return try await write { [queue, store] db in
            let queued = try queue.count(db, table: table)
            if queued > 0 {
                guard force else { throw SyncError.pendingOperations(table: table, count: queued) }
                try queue.removeAll(db, table: table)
            }
            try db.execute(
                sql: "DELETE FROM \(table.quotedSQLName)\(filter)", arguments: StatementArguments(arguments))
            let removed = db.changesCount
            try store.removeDeltaTokens(db, table: table)
            try queue.history.recordTableEvent(
                db, .purged, table: table,
                detail: "\(removed) local rows removed" + (query == nil ? "" : " (those matching a query)")
                    + (queued > 0 ? ", \(queued) queued changes dropped" : ""))
            return removed
        }
    }
}
