import Foundation
import GRDB
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
struct PageCounts: Sendable {
    var written = 0
    var deleted = 0
    var skipped = 0
}

extension SyncContext {
    /// Brings the server's rows of `table` (matching `query`'s predicate) into the local table.
    ///
    /// Pushes first when the table has pending operations; never overwrites rows that still have a
    /// queued change; removes rows the server deleted. With a `queryId` the pull is incremental: it
    /// asks only for rows changed since the saved delta token, which is saved with each page.
    public func pull(
        _ table: String, query: TableQuery? = nil, queryId: String? = nil, settings: PullSettings = PullSettings()
    ) async throws -> PullResult {
        let job = SyncJob.PullJob(
            table: table, queryId: queryId, filter: query?.odataFilter, pageSize: settings.pageSize)
        return try await exclusive(join: { $0.pull(job) }, start: { .pull(job, $0) }) {
            try await self.runPull(table, query: query, queryId: queryId, settings: settings)
        }
    }

    private func runPull(
        _ table: String, query: TableQuery?, queryId: String?, settings: PullSettings
    ) async throws
        -> PullResult
    {
        let description = try store.description(of: table)
        _ = try readyTransport(.pull, table: table)
        var result = PullResult()
        let waiting = try read { [queue] db in try queue.sendableCount(db, table: table) }
        if waiting > 0 { result.pushed = try await runPush() }
        let transport = try readyTransport(.pull, table: table)
        monitor.update { $0 = SyncProgress(activity: .pulling, table: table, done: 0, total: nil, startedAt: Date()) }
        defer { monitor.update { $0 = .idle } }
        do {
            try await pages(
                description, query: query, queryId: queryId, settings: settings, transport: transport, &result)
        } catch {
            let error = Self.syncError(error)
            var reason: StopReason?
            if case .stopped(let stopped) = error { reason = stopped }
            recordLastSync(
                SyncSummary(
                    kind: .pull, table: table, finishedAt: Date(), pushed: result.pushed?.pushed.count ?? 0,
                    conflicts: 0, failed: 0, pulled: result.received, stopReason: reason,
                    error: reason == nil ? error.description : nil))
            throw error
        }
        recordLastSync(
            SyncSummary(
                kind: .pull, table: table, finishedAt: Date(), pushed: result.pushed?.pushed.count ?? 0,
                conflicts: result.pushed?.conflicts.count ?? 0, failed: result.pushed?.failed.count ?? 0,
                pulled: result.received, stopReason: nil, error: nil))
        return result
    }

    private func pages(
        _ table: TableDescription, query: TableQuery?, queryId: String?, settings: PullSettings,
        transport: HTTPTransport, _ result: inout PullResult
    ) async throws {
        let tokenKey = queryId.map { LocalStore.deltaTokenKey(table: table.name, queryId: $0) }
        var token = DeltaToken()
        if let tokenKey, let saved = try read({ [store] db in try store.config(db, tokenKey) }),
            let decoded = try? JSONDecoder().decode(DeltaToken.self, from: Data(saved.utf8))
        {
            token = decoded
        }
        let layout = PageLayout(table)
        let path = transport.path(table: table.name)
        var previousIds: [String]?
        var pendingWrite: Task<PageCounts, any Error>?
        do {
            try await fetchPages(
                table, query: query, layout: layout, path: path, settings: settings, transport: transport,
                tokenKey: tokenKey, token: &token, previousIds: &previousIds, pendingWrite: &pendingWrite, &result)
            try await finishWrite(&pendingWrite, into: &result)
        } catch {
            // Keep what was received: the last page's write (and token) completes before the error surfaces.
            try? await finishWrite(&pendingWrite, into: &result)
            throw error
        }
    }

    private func fetchPages(
        _ table: TableDescription, query: TableQuery?, layout: PageLayout, path: String, settings: PullSettings,
        transport: HTTPTransport, tokenKey: String?, token: inout DeltaToken, previousIds: inout [String]?,
        pendingWrite: inout Task<PageCounts, any Error>?, _ result: inout PullResult
    ) async throws {
        while true {
            try Task.checkCancellation()
            let filter = [query?.odataFilter, token.filter].compactMap { $0 }.joined(separator: " and ")
            var parameters: [(String, String)] = []
            if !filter.isEmpty { parameters.append(("$filter", filter)) }
            parameters.append(("$orderby", token.skip == nil ? "updatedAt,id" : "updatedAt"))
            if let skip = token.skip, skip > 0 { parameters.append(("$skip", String(skip))) }
            parameters.append(("$top", String(settings.pageSize)))
            parameters.append(("__includeDeleted", "true"))

            let reply = try await transport.send("GET", path, query: parameters)
            try Self.checkPage(reply)
            let rows = try layout.decode(reply.body)
            result.pages += 1
            if rows.isEmpty { return }
            let ids = rows.compactMap(\.id)
            // With $skip, the same page twice means the server ignores paging (the keyset mode
            // detects a lack of progress itself, in `advance`).
            if token.skip != nil, ids == previousIds { throw SyncError.serviceFault(.repeatedPages(table: table.name)) }
            previousIds = ids

            let next = Self.advance(token, over: rows)
            // Page n is written (with its token, in one transaction) while page n+1 is fetched and
            // decoded; writes stay in order because each starts after the previous one finished.
            try await finishWrite(&pendingWrite, into: &result)
            let tokenText = try tokenKey.map { _ in String(decoding: try JSONEncoder().encode(next), as: UTF8.self) }
            pendingWrite = Task.detached { [store, queue] in
                try store.pool.write { db in
                    let counts = try Self.apply(
                        rows, to: table, keeping: try queue.itemIds(db, table: table.name), in: db)
                    if let tokenKey, let tokenText { try store.setConfig(db, tokenKey, tokenText) }
                    return counts
                }
            }
            if (token.skip == nil) != (next.skip == nil) {
                // Switching to the $skip fallback asks for rows already seen: not a lack of progress.
                previousIds = nil
            }
            token = next
            result.received += rows.count
            monitor.update { $0.done += rows.count }
        }
    }

    private func finishWrite(_ write: inout Task<PageCounts, any Error>?, into result: inout PullResult) async throws {
        guard let running = write else { return }
        write = nil
        let counts: PageCounts
        do { counts = try await running.value } catch let error as SyncError { throw error } catch {
            throw SyncError.storage(StoreFailure(error))
        }
        result.written += counts.written
        result.deleted += counts.deleted
        result.skippedPending += counts.skipped
    }

    /// The cursor after a page: the last row by `(updatedAt, id)`, or the `$skip` fallback when the
    /// page brought nothing past the cursor.
    static func advance(_ token: DeltaToken, over rows: [PulledRow]) -> DeltaToken {
        if token.skip == nil {
            var next = token
            for row in rows {
                guard let updatedAt = row.updatedAt, let id = row.id else { continue }
                if next.isBefore(updatedAt: updatedAt, id: id) {
                    next.updatedAt = updatedAt
                    next.id = id
                }
            }
            if next != token { return next }
            // No progress: this server does not honour the keyset filter. Page with $skip instead.
            return DeltaToken(updatedAt: token.updatedAt, id: nil, skip: 0)
        }
        var latest = token.updatedAt
        for row in rows {
            guard let updatedAt = row.updatedAt else { continue }
            if latest == nil || DeltaToken.compare(latest!, updatedAt) == .orderedAscending { latest = updatedAt }
        }
        guard let latest else { return DeltaToken(updatedAt: nil, id: nil, skip: (token.skip ?? 0) + rows.count) }
        if let current = token.updatedAt, DeltaToken.compare(current, latest) == .orderedSame {
            return DeltaToken(updatedAt: current, id: nil, skip: (token.skip ?? 0) + rows.count)
        }
        let atLatest = rows.filter { $0.updatedAt.map { DeltaToken.compare($0, latest) == .orderedSame } ?? false }
        return DeltaToken(updatedAt: latest, id: nil, skip: atLatest.count)
    }

    private static func checkPage(_ reply: HTTPReply) throws(SyncError) {
        switch reply.status {
        case 200..<300: return
        case 401, 403: throw .stopped(.notAuthorized(status: reply.status, message: reply.message))
        case 408: throw .stopped(.timedOut)
        case 429, 500...: throw .stopped(.serverError(status: reply.status, message: reply.message))
        default: throw .badResponse("HTTP \(reply.status): \(reply.message)")
        }
    }

    /// Writes one page in the caller's transaction, with prepared statements; rows of the `pending`
    /// items (those with a queued local change) are left alone.
    static func apply(
        _ rows: [PulledRow], to table: TableDescription, keeping pending: Set<String>, in db: Database
    ) throws -> PageCounts {
        let insert = try db.makeStatement(
            sql: "INSERT OR REPLACE INTO \(table.name.quotedDatabaseIdentifier) ("
                + table.allColumns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ") + ") VALUES ("
                + Array(repeating: "?", count: table.allColumns.count).joined(separator: ", ") + ")")
        let delete = try db.makeStatement(sql: "DELETE FROM \(table.name.quotedDatabaseIdentifier) WHERE id = ?")
        var counts = PageCounts()
        for row in rows {
            guard let id = row.id else { continue }
            if pending.contains(id) {
                counts.skipped += 1
            } else if row.deleted {
                try delete.execute(arguments: [id])
                counts.deleted += 1
            } else {
                try insert.execute(arguments: StatementArguments(row.values))
                counts.written += 1
            }
        }
        return counts
    }

    /// Removes local rows matching `query` (all rows when nil) and the table's delta tokens.
    /// Refused while the table has queued operations, unless `force`, which drops them with their errors.
    @discardableResult
    public nonisolated func purge(
        _ table: String, query: TableQuery? = nil, force: Bool = false
    ) throws(SyncError)
        -> Int
    {
        let description = try store.description(of: table)
        let (filter, arguments) = try (query ?? .all).sqlWhere(description)
        return try write { [queue] db in
            let queued = try queue.count(db, table: table)
            if queued > 0 {
                guard force else { throw SyncError.pendingOperations(table: table, count: queued) }
                try queue.removeAll(db, table: table)
            }
            try db.execute(
                sql: "DELETE FROM \(table.quotedDatabaseIdentifier)\(filter)", arguments: StatementArguments(arguments))
            let removed = db.changesCount
            try db.execute(
                sql: "DELETE FROM __config WHERE key LIKE ? ESCAPE '\\'",
                arguments: [
                    LocalStore.deltaTokenKey(table: table, queryId: "").replacingOccurrences(of: "_", with: "\\_")
                        + "%"
                ])
            return removed
        }
    }
}
