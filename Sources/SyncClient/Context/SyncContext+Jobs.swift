extension SyncContext {
    /// Sends the queued operations in order: inserts (POST), updates (PATCH) and deletes (DELETE),
    /// the last two with `If-Match`. Conflicts and refusals are recorded and push goes on.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the server is unreachable, times out, fails (5xx),
    ///   refuses access (401/403), offline mode is on or the push is cancelled (``cancel()``);
    ///   ``SyncError/serviceFault(_:)`` when the service answers about another item. The queue is
    ///   intact and retrying is safe. A second caller while a push runs shares its result.
    public func push() async throws -> PushResult {
        guard case .pushed(let result) = try await run(.push) else { preconditionFailure("a push ends pushed") }
        return result
    }

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

    /// Compares the local table with the service, row by row (by id, version and `updatedAt`, the
    /// service's deleted rows included, and for copies of the same version their values, column by
    /// column, as the local table holds them), and lists each row that differs with its reason: a queued
    /// change, a conflict, a change on the service after the last pull — or none, a silent
    /// divergence. Reads only: the local store is never written.
    ///
    /// The service's rows are read in pages of `pageSize` ordered by id (the next one on the wire
    /// while one is compared, as in a pull); each page is compared with the local rows of its ids,
    /// and its ids are kept in a scratch file so that local rows the service does not have are found
    /// by a second pass over the local table: memory stays flat in the number of rows. Runs as a job of its own (never beside a push or pull), shows progress
    /// and stops on ``JobSlot/cancel()``.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` as a pull does (unreachable, deadlines, offline,
    ///   cancelled), ``SyncError/serviceFault(_:)`` when the service's paging is broken.
    public func verify(_ table: String, pageSize: Int = 1000) async throws -> VerifyReport {
        guard case .verified(let reports, _) = try await run(.verify(table: table, pageSize: pageSize)),
            let report = reports.first
        else { preconditionFailure("a verify of one table ends with its report") }
        return report
    }

    /// Starts `job` in the background now, unless a job runs: then `requester` joins that job instead
    /// and is named when it ends (``JobEvent/released(_:requesters:)``). Returns whether it started;
    /// its end reaches ``jobs``' observers. `automatic`: auto-sync starts it, not a person.
    public nonisolated func start(_ job: SyncJob, requester: String? = nil, automatic: Bool = false) -> Bool {
        jobs.start(job, requester: requester, automatic: automatic) { await self.perform(job) }
    }

    /// Runs `job` once no other job runs (sharing the outcome of an equal job that runs), cancelled
    /// with the caller.
    func run(_ job: SyncJob) async throws -> JobOutcome {
        try await jobs.run(job) { await self.perform(job) }
    }

    /// What each job does, in the slot (which then keeps its last sync and settles the store's
    /// access: ``RevocationSettlement/settle(after:_:)``).
    private func perform(_ job: SyncJob) async -> JobEnding {
        switch job {
        case .push:
            let (result, error) = await pusher.run(window: pushWindow)
            return JobEnding(.pushed(result), stoppedBy: error)
        case .pull(let table, let query, let queryId, let settings):
            let (result, error) = await puller.run(table, query: query, queryId: queryId, settings: settings)
            return JobEnding(.pulled(result), stoppedBy: error)
        case .sync(let queryId, let pageSize):
            return await runSync(queryId: queryId, settings: PullSettings(pageSize: pageSize))
        case .verify(let table?, let pageSize):
            return await JobEnding.of {
                .verified([try await verifier.run(table, pageSize: Self.verifyPageSize(pageSize))], stopped: nil)
            }
        case .verify(nil, let pageSize):
            return await JobEnding.of { try await runVerify(syncedTables(), pageSize: Self.verifyPageSize(pageSize)) }
        case .useClient(let operationId):
            return await JobEnding.of {
                .decided(
                    try await pusher.pushDecision(
                        operationId, PendingDecision(decision: .useClient, decidedBy: .person)))
            }
        case .overturn(let entryId):
            return await JobEnding.of { .decided(try await journal.runOverturn(entryId, batch: nil)) }
        }
    }

    /// A push when changes are pending or a conflict waits that its policy settles (one met again in
    /// the push before), then a pull of each synced table with `queryId`'s delta token. A table the
    /// service does not have is noted and the others pulled; any other error stops the sync.
    private func runSync(queryId: String, settings: PullSettings) async -> JobEnding {
        var result = SyncRunResult()
        do throws(SyncError) {
            let tables = try syncedTables()
            let waiting = try await store.asyncRead { [queue, settlement = pusher.settlement] db in
                try tables.contains { try queue.sendableCount(db, table: $0) > 0 }
                    || settlement.hasConflictsForTheirPolicy(db)
            }
            if waiting {
                let (pushed, error) = await pusher.run(window: pushWindow)
                result.pushed = pushed
                if let error { throw error }
            }
            for table in tables {
                let (pulled, error) = await puller.run(table, query: nil, queryId: queryId, settings: settings)
                switch error {
                case nil: result.pulls.append(.pulled(table, pulled))
                case .serviceHasNoTable(let name)?: result.pulls.append(.missing(name))
                case let error?:
                    result.pulls.append(.stopped(table, pulled))
                    throw error
                }
            }
            return .finished(.synced(result))
        } catch {
            return .stopped(partial: .synced(result), by: error)
        }
    }

    /// Verifies each of `tables`, keeping the reports of those done when an error stopped it.
    private func runVerify(_ tables: [String], pageSize: Int) async throws -> JobOutcome {
        var reports: [VerifyReport] = []
        for table in tables {
            do {
                reports.append(try await verifier.run(table, pageSize: pageSize))
            } catch let error as SyncError {
                return .verified(reports, stopped: error)
            }
        }
        return .verified(reports, stopped: nil)
    }

    /// Rows per page of a verify: 1 to 10,000.
    private static func verifyPageSize(_ asked: Int) -> Int { max(1, min(asked, 10_000)) }
}
