import Foundation
import GRDB
import SyncProtocol

/// The queue as a revoked device hands it to the service's escrow (``RevocationSettlement/settle(_:)``).
extension SyncOperationQueue {
    /// Every queued operation, whatever its state (waiting, in conflict, held), oldest first, as the
    /// device would have pushed it: an insert's or an update's row (every user column, with the
    /// version an update started from), a delete's id and version.
    func escrowOperations(_ db: Database) throws -> [EscrowDeposit.Operation] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT id, tableName, itemId, kind, item, base, queuedAt FROM __operations ORDER BY id")
        var wanted: [String: [String]] = [:]
        for row in rows where row["kind"] as String != OperationKind.delete.rawValue {
            wanted[row["tableName"], default: []].append(row["itemId"])
        }
        var current: [String: [String: Item]] = [:]
        for (table, ids) in wanted {
            guard let description = try? store.description(of: table, in: db) else { continue }
            current[table] = try store.readItems(db, table: description, ids: ids)
        }
        return try rows.map { row in
            let (table, itemId): (String, String) = (row["tableName"], row["itemId"])
            let kind: OperationKind = try OperationRecord.known(row, OperationRecord.Columns.kind)
            let queued = ItemCoding.decode(row["item"])
            var item: Item
            switch kind {
            case .insert, .update:
                // The row as it is now: what the next push would have sent.
                item = current[table]?[itemId] ?? queued ?? [:]
                for column in [SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.deleted] {
                    item[column] = nil
                }
                let base = ItemCoding.decode(row["base"])?[SystemColumn.version] ?? queued?[SystemColumn.version]
                item[SystemColumn.version] = kind == .update ? base : nil
            case .delete:
                item = [:]
                item[SystemColumn.version] = queued?[SystemColumn.version]
            }
            item[SystemColumn.id] = .string(itemId)
            return EscrowDeposit.Operation(
                operationID: row["id"], table: table, operation: kind.rawValue, itemID: itemId, item: .object(item),
                queuedAt: row["queuedAt"])
        }
    }
}
