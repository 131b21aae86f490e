import Foundation
import GRDB
import Storage
import SyncProtocol

/// How a reconcile settles rows: each against its local copy as ``RestoreRule`` says, a conflict
/// recorded for each row gone from the service or older there.
extension Reconciler {
    /// One page of the service's rows against the local copies, in the caller's transaction.
    static func settle(
        _ pulled: [PulledRow], of tableName: String, restoredTo epoch: ServiceEpoch?, store: LocalStore,
        queue: SyncOperationQueue, _ db: Database
    ) throws -> ReconcileCounts {
        var counts = ReconcileCounts()
        let (table, rows) = try store.widen(db, tableName, forPulled: pulled)
        let queued = try queue.itemIds(db, table: table.name)
        let locals = try Self.copies(of: rows.compactMap(\.id), in: table, db)
        var taken: [PulledRow] = []
        for row in rows {
            guard let id = row.id else { continue }
            let service = RestoreRule.Copy(
                version: row.version, updatedAt: Self.milliseconds(row.updatedAt), deleted: row.deleted)
            switch RestoreRule.decide(local: locals[id], service: service, queued: queued.contains(id)) {
            case .keep: continue
            case .takeService:
                taken.append(row)
            case .goneFromService:
                counts.gone += 1
                guard let local = try store.readItem(db, table: table, id: id) else { continue }
                try Self.recordConflict(
                    .goneFromService, table: table, local: local, server: nil, epoch: epoch, queue: queue, db)
            case .restoredOlder:
                counts.older += 1
                guard let local = try store.readItem(db, table: table, id: id) else { continue }
                try Self.recordConflict(
                    .restoredOlder, table: table, local: local,
                    server: LocalStore.item(values: row.values, table: table), epoch: epoch, queue: queue, db)
            }
        }
        let applied = try PageWriter.apply(taken, to: table, keeping: [], in: db)
        counts.taken = applied.written + applied.deleted
        return counts
    }

    /// A conflict for the row `local`: an update from the last copy this store synced, in conflict
    /// with the service's `server` copy (nil: gone from the service).
    static func recordConflict(
        _ kind: OperationErrorKind, table: TableDescription, local: Item, server: Item?, epoch: ServiceEpoch?,
        queue: SyncOperationQueue, _ db: Database
    ) throws {
        let itemId = local[SystemColumn.id]?.stringValue ?? ""
        let when = epoch?.restoredTo.map { " to " + ProtocolDate.format(milliseconds: $0) } ?? ""
        let message =
            kind == .goneFromService
            ? "The service went back in time\(when), before this row was written: it no longer has it."
            : "The service went back in time\(when): it holds older values of this row than you had synced."
        let now = Date()
        let operation = TableOperation(
            id: 0, table: table.name, itemId: itemId, kind: .update, state: .conflict, item: nil, base: local,
            attempts: 0, queuedAt: now, lastAttemptAt: nil, lastStatus: nil, message: message)
        let id = try queue.insert(db, operation)
        try queue.saveError(
            db,
            OperationError(
                operationId: id, kind: kind, status: nil, message: message, serverItem: server, clientItem: local,
                recordedAt: now))
        try queue.history.recordOperation(db, .conflict, operationId: id, detail: message)
    }

    /// The version, stamp and delete of the local rows of `ids` (the whole rows only for the few
    /// that become conflicts).
    static func copies(
        of ids: [String], in table: TableDescription, _ db: Database
    ) throws -> [String: RestoreRule.Copy] {
        var copies: [String: RestoreRule.Copy] = [:]
        let rows = try Row.fetchAll(
            db,
            sql:
                "SELECT id, version, updatedAt FROM \(table.name.quotedSQLName) WHERE id IN (\(sqlParameters(ids.count)))",
            arguments: StatementArguments(ids))
        for row in rows {
            copies[row[0]] = RestoreRule.Copy(version: row[1], updatedAt: milliseconds(row[2]))
        }
        return copies
    }

    static func copy(_ item: Item) -> RestoreRule.Copy {
        RestoreRule.Copy(
            version: item[SystemColumn.version]?.stringValue,
            updatedAt: milliseconds(item[SystemColumn.updatedAt]?.stringValue),
            deleted: item[SystemColumn.deleted] == .bool(true))
    }

    static func milliseconds(_ text: String?) -> Int64? {
        text.flatMap(ProtocolDate.parse)
    }
}

/// What a reconcile did to the rows of a table, or a page of them.
struct ReconcileCounts: Sendable {
    var gone = 0
    var older = 0
    var taken = 0

    static func + (left: Self, right: Self) -> Self {
        Self(gone: left.gone + right.gone, older: left.older + right.older, taken: left.taken + right.taken)
    }
}
