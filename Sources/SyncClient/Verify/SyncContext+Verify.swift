import Foundation
import GRDB
import Storage
import SyncProtocol

extension SyncContext {
    /// Compares the local table with the service, row by row (by id, version and `updatedAt`, the
    /// service's deleted rows included, and for copies of the same version their values, by a content
    /// hash and then column by column), and lists each row that differs with its reason: a queued
    /// change, a conflict, a change on the service after the last pull — or none, a silent
    /// divergence. Reads only: the local store is never written.
    ///
    /// The service's rows are read in pages of `pageSize` ordered by id; each page is compared with
    /// the local rows of its ids, and its ids are kept in a scratch file so that local rows the
    /// service does not have are found by a second pass over the local table: memory stays flat in
    /// the number of rows. Runs as a job of its own (never beside a push or pull), shows progress
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

    func runVerify(_ table: String, pageSize: Int) async throws -> VerifyReport {
        let description = try store.description(of: table)
        if monitor.offline { throw SyncError.stopped(.offline) }
        guard let bound = transport else { throw SyncError.noRemote }
        let transport = try await speakingTransport(bound, table: table)
        monitor.update {
            $0 = SyncProgress(activity: .verifying, table: table, done: 0, total: nil, startedAt: Date())
        }
        defer { monitor.update { $0 = .idle } }
        let pulledUpTo = try await store.asyncRead { [store] db in
            RowComparison.furthest(try store.deltaTokens(db, table: table))
        }
        let scratch = try VerifyScratch()
        defer { scratch.remove() }
        var report = VerifyReport(table: table, localRows: 0, serviceRows: 0, differences: [], finishedAt: Date())
        try await compareServiceRows(
            description, pageSize: pageSize, transport: transport, pulledUpTo: pulledUpTo, scratch: scratch, &report)
        try await findRowsOnlyHere(description, pageSize: pageSize, scratch: scratch, &report)
        report.differences.sort { ($0.reason == .none ? 0 : 1, $0.id) < ($1.reason == .none ? 0 : 1, $1.id) }
        report.finishedAt = Date()
        return report
    }

    /// Pass 1: every row of the service, page by page, against the local rows of the same ids.
    private func compareServiceRows(
        _ table: TableDescription, pageSize: Int, transport: HTTPTransport, pulledUpTo: DeltaToken?,
        scratch: VerifyScratch, _ report: inout VerifyReport
    ) async throws {
        var after: String?
        var previous: Set<String> = []
        var page = 0
        while true {
            try Task.checkCancellation()
            page += 1
            var query: [(String, String)] = [
                ("$orderby", "id"), ("$top", String(pageSize)),
                (transport.tableProtocol.includeDeletedParameter, "true"),
            ]
            if let after { query.append(("$filter", "id gt \(TableQuery.odataString(after))")) }
            if page == 1 { query.append(transport.tableProtocol.countParameter) }
            let reply = try await transport.send(
                .get, transport.path(table: table.name), query: query, for: .verify(table: table.name, page: page))
            try Self.checkPage(reply, table: table.name)
            let rows = try Self.serviceCopies(reply.body, table: table.name)
            if let total = rows.count { monitor.update { $0.total = total } }
            guard !rows.copies.isEmpty else { return }
            let ids = rows.copies.map(\.id)
            // A service that ignores the filter sends the same rows again: it would never end.
            if ids.contains(where: { previous.contains($0) }) {
                throw SyncError.serviceFault(.repeatedPages(table: table.name))
            }
            let (local, queued) = try await localCopies(table, ids: ids, withValues: true)
            for (id, service) in rows.copies {
                if let difference = RowComparison.difference(
                    id: id, local: local[id], service: service, queued: queued[id], pulledUpTo: pulledUpTo)
                {
                    report.differences.append(difference)
                }
            }
            try scratch.remember(ids)
            report.serviceRows += ids.count
            monitor.update { $0.done = report.serviceRows }
            after = ids.last
            previous = Set(ids)
        }
    }

    /// Pass 2: the local rows the service did not send at all.
    private func findRowsOnlyHere(
        _ table: TableDescription, pageSize: Int, scratch: VerifyScratch, _ report: inout VerifyReport
    ) async throws {
        var after = ""
        while true {
            try Task.checkCancellation()
            let (name, start) = (table.name.quotedSQLName, after)
            let rows = try await store.asyncRead { db in
                try Row.fetchAll(
                    db, sql: "SELECT id, version, updatedAt FROM \(name) WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [start, pageSize]
                ).map { row in
                    (row["id"] as String, RowComparison.Copy(version: row["version"], updatedAt: row["updatedAt"]))
                }
            }
            guard let last = rows.last else { return }
            report.localRows += rows.count
            let unseen = try scratch.unseen(rows.map(\.0))
            if !unseen.isEmpty {
                let queued = try await localCopies(table, ids: Array(unseen)).queued
                for (id, local) in rows where unseen.contains(id) {
                    if let difference = RowComparison.difference(
                        id: id, local: local, service: nil, queued: queued[id], pulledUpTo: nil)
                    {
                        report.differences.append(difference)
                    }
                }
            }
            after = last.0
        }
    }

    /// The local copies of `ids` (`withValues`: with their user columns' values) and the state of
    /// each one's queued change (a conflict first).
    private func localCopies(
        _ table: TableDescription, ids: [String], withValues: Bool = false
    ) async throws -> (copies: [String: RowComparison.Copy], queued: [String: OperationState]) {
        try await store.asyncRead { [queue, store] db in
            var copies: [String: RowComparison.Copy] = [:]
            if withValues {
                for (id, item) in try store.readItems(db, table: table, ids: ids) {
                    copies[id] = RowComparison.Copy(
                        version: item[SystemColumn.version]?.stringValue,
                        updatedAt: item[SystemColumn.updatedAt]?.stringValue,
                        values: item)
                }
            } else {
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, version, updatedAt FROM \(table.name.quotedSQLName)
                        WHERE id IN (\(sqlParameters(ids.count)))
                        """,
                    arguments: StatementArguments(ids))
                for row in rows {
                    copies[row["id"]] = RowComparison.Copy(version: row["version"], updatedAt: row["updatedAt"])
                }
            }
            var queued: [String: OperationState] = [:]
            for operation in try queue.summaries(db, table: table.name, itemIds: ids)
            where queued[operation.itemId] != .conflict {
                queued[operation.itemId] = operation.state
            }
            return (copies, queued)
        }
    }

    /// The id, version, `updatedAt`, `deleted` and values of each row of a page, and the total when given.
    private static func serviceCopies(
        _ body: Data, table: String
    ) throws(SyncError) -> (copies: [(id: String, copy: RowComparison.Copy)], count: Int?) {
        let page: OrderedJSONParser.Page
        do {
            page = try OrderedJSONParser.page(Array(body))
        } catch {
            throw .badResponse("The service's page of '\(table)' is not a page of rows: \(error.message)")
        }
        var copies: [(id: String, copy: RowComparison.Copy)] = []
        copies.reserveCapacity(page.items.count)
        for members in page.items {
            var id: String?
            var (version, updatedAt, deleted) = (String?.none, String?.none, false)
            var values: [String: JSONValue] = [:]
            for (name, value) in members {
                switch name {
                case SystemColumn.id: id = value.stringValue
                case SystemColumn.version: version = value.stringValue
                case SystemColumn.updatedAt: updatedAt = value.stringValue
                case SystemColumn.deleted: deleted = value == .bool(true)
                case SystemColumn.createdAt: break
                default: values[name] = value
                }
            }
            guard let id else { throw .badResponse("The service sent a row of '\(table)' without an id.") }
            copies.append(
                (id, RowComparison.Copy(version: version, updatedAt: updatedAt, deleted: deleted, values: values)))
        }
        return (copies, page.count)
    }
}
