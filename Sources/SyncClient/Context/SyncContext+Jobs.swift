extension SyncContext {
    /// Starts `job` in the background now, unless a job runs: then `requester` joins that job instead
    /// and is named when it ends (``JobEvent/released(_:requesters:)``). Returns whether it started;
    /// its end reaches ``jobs``' observers. `automatic`: auto-sync starts it, not a person.
    public nonisolated func start(_ job: SyncJob, requester: String? = nil, automatic: Bool = false) -> Bool {
        jobs.start(job, requester: requester, automatic: automatic) { try await self.perform(job) }
    }

    /// Runs `job` once no other job runs (sharing the outcome of an equal job that runs), cancelled
    /// with the caller.
    func run(_ job: SyncJob) async throws -> JobOutcome {
        try await jobs.run(job) { try await self.perform(job) }
    }

    /// What each job does, in the slot. A job the service refuses because this store's access was
    /// revoked settles the revocation first (escrow, then wipe or read-only); a pull or sync that
    /// succeeds ends a read-only state (access restored: a push of nothing asks the service nothing).
    private func perform(_ job: SyncJob) async throws -> JobOutcome {
        do {
            let outcome = try await performUnsettled(job)
            switch job {
            case .pull, .sync: try await forgetRevokedAccess()
            default: break
            }
            return outcome
        } catch SyncError.stopped(.accessRevoked(let revocation)) {
            try await settle(revocation)
            throw SyncError.stopped(.accessRevoked(revocation))
        }
    }

    private func performUnsettled(_ job: SyncJob) async throws -> JobOutcome {
        switch job {
        case .push:
            return .pushed(try await runPush())
        case .pull(let table, let query, let queryId, let settings):
            return .pulled(try await runPull(table, query: query, queryId: queryId, settings: settings))
        case .sync(let queryId, let pageSize):
            return .synced(try await runSync(queryId: queryId, settings: PullSettings(pageSize: pageSize)))
        case .verify(let table?, let pageSize):
            return .verified([try await runVerify(table, pageSize: Self.verifyPageSize(pageSize))], stopped: nil)
        case .verify(nil, let pageSize):
            return try await runVerify(syncedTables(), pageSize: Self.verifyPageSize(pageSize))
        case .useClient(let operationId):
            return .decided(
                try await pushDecisionNow(operationId, PendingDecision(decision: .useClient, decidedBy: .person)))
        case .overturn(let entryId):
            return .decided(try await runOverturn(entryId, batch: nil))
        }
    }

    /// A push when changes are pending or a conflict waits that its policy settles (one met again in
    /// the push before), then a pull of each synced table with `queryId`'s delta token.
    private func runSync(queryId: String, settings: PullSettings) async throws -> SyncRunResult {
        var result = SyncRunResult()
        let tables = try syncedTables()
        let waiting = try await store.asyncRead { [queue] db in
            try tables.contains { try queue.sendableCount(db, table: $0) > 0 } || self.hasConflictsForTheirPolicy(db)
        }
        if waiting { result.pushed = try await runPush() }
        for table in tables {
            do {
                result.pulled.append(
                    (table, try await runPull(table, query: nil, queryId: queryId, settings: settings)))
            } catch SyncError.serviceHasNoTable(let name) {
                result.missingTables.append(name)
            }
        }
        return result
    }

    /// Verifies each of `tables`, keeping the reports of those done when an error stopped it.
    private func runVerify(_ tables: [String], pageSize: Int) async throws -> JobOutcome {
        var reports: [VerifyReport] = []
        for table in tables {
            do {
                reports.append(try await runVerify(table, pageSize: pageSize))
            } catch let error as SyncError {
                return .verified(reports, stopped: error)
            }
        }
        return .verified(reports, stopped: nil)
    }

    /// Rows per page of a verify: 1 to 10,000.
    private static func verifyPageSize(_ asked: Int) -> Int { max(1, min(asked, 10_000)) }
}
