import Foundation
import GRDB
import Storage
import SyncProtocol

/// Verifies one table against the service, row by row, as a job (see ``SyncContext/verify(_:pageSize:)``):
/// reads only, the local store is never written.
struct Verifier: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    let monitor: SyncMonitor
    /// Readies the transport of each verify, as for a push or pull (offline, no remote, the
    /// protocol), without reconciling: a verify only reads.
    let gate: TransportGate

    /// The verify job of `table`, reading the service's rows in pages of `pageSize`.
    func run(_ table: String, pageSize: Int) async throws -> VerifyReport {
        let description = try store.description(of: table)
        let transport = try await gate.ready(for: .verify(table: table))
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

    /// Pass 1: every row of the service, page by page, against the local rows of the same ids, both
    /// as the local table's values (each page decoded as a pull decodes its own).
    private func compareServiceRows(
        _ table: TableDescription, pageSize: Int, transport: HTTPTransport, pulledUpTo: DeltaToken?,
        scratch: VerifyScratch, _ report: inout VerifyReport
    ) async throws {
        let layout = PageLayout(table)
        try await transport.readRowsById(
            table.name, layout: { layout }, pageSize: pageSize, counting: true,
            purpose: { .verify(table: table.name, page: $0) }
        ) { rows, ids, total in
            if let total { monitor.update { $0.total = total } }
            guard ids.count == rows.count else {
                throw SyncError.badResponse("The service sent a row of '\(table.name)' without an id.")
            }
            let (local, queued) = try await localCopies(table, ids: ids, withValues: true)
            for (id, row) in zip(ids, rows) {
                if let difference = RowComparison.difference(
                    id: id, local: local[id], service: RowComparison.Copy(pulled: row), queued: queued[id],
                    pulledUpTo: pulledUpTo, table: table)
                {
                    report.differences.append(difference)
                }
            }
            try scratch.remember(ids)
            report.serviceRows += ids.count
            monitor.update { $0.done = report.serviceRows }
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
            let ids = try await store.asyncRead { db in
                try String.fetchAll(
                    db, sql: "SELECT id FROM \(name) WHERE id > ? ORDER BY id LIMIT ?", arguments: [start, pageSize])
            }
            guard let last = ids.last else { return }
            report.localRows += ids.count
            let unseen = try scratch.unseen(ids)
            if !unseen.isEmpty {
                // Their versions and stamps are read for the report.
                let onlyHere = ids.filter(unseen.contains)
                let (local, queued) = try await localCopies(table, ids: onlyHere)
                for id in onlyHere {
                    if let difference = RowComparison.difference(
                        id: id, local: local[id], service: nil, queued: queued[id], pulledUpTo: nil, table: table)
                    {
                        report.differences.append(difference)
                    }
                }
            }
            after = last
        }
    }

    /// The local copies of `ids` (`withValues`: with the values of all their columns, read with the
    /// table's ``TableDescription/selectList``) and the state of each one's queued change (a
    /// conflict first).
    private func localCopies(
        _ table: TableDescription, ids: [String], withValues: Bool = false
    ) async throws -> (copies: [String: RowComparison.Copy], queued: [String: OperationState]) {
        try await store.asyncRead { [queue] db in
            var copies: [String: RowComparison.Copy] = [:]
            let columns = withValues ? table.selectList : "id, version, updatedAt"
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT \(columns) FROM \(table.name.quotedSQLName)
                        WHERE id IN (\(sqlParameters(ids.count)))
                        """),
                arguments: StatementArguments(ids))
            while let row = try rows.next() {
                copies[row[0]] =
                    withValues
                    ? RowComparison.Copy(stored: Array(row.databaseValues))
                    : RowComparison.Copy(version: row[1], updatedAt: row[2])
            }
            var queued: [String: OperationState] = [:]
            for operation in try queue.summaries(db, table: table.name, itemIds: ids)
            where queued[operation.itemId] != .conflict {
                queued[operation.itemId] = operation.state
            }
            return (copies, queued)
        }
    }
}
