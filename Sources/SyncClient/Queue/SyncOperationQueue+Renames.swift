import GRDB
import SyncProtocol

extension SyncOperationQueue {
    /// Moves the queued changes of `table` from column `from` to `to` (the service renamed it), in
    /// the caller's transaction: the bodies to send, the bases, the bodies sent before and the
    /// changed columns, so that each goes out under the new name.
    func renameColumn(_ db: Database, table: String, from: String, to: String) throws {
        let columns = [Columns.item, Columns.base, Columns.earlierBodies, Columns.changedColumns]
        let rows = try Row.fetchAll(
            db, OperationRecord.select([Columns.id] + columns).filter(Columns.tableName == table))
        for row in rows {
            let renamed = columns.map { column in
                column.set(to: (row[column] as String?).map { Self.renamingKey(in: $0, from: from, to: to) })
            }
            try OperationRecord.filter(key: row[Columns.id] as Int64).updateAll(db, renamed)
        }
    }

    /// `text` (JSON) with the member `from` of an object, or of each object of an array, under
    /// `to` (unless it has `to` already), and the string `from` of an array of names as `to`.
    /// Text that is not JSON is returned as it is.
    static func renamingKey(in text: String, from: String, to: String) -> String {
        guard let value = ItemCoding.value(text) else { return text }
        func renamed(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(var members):
                if let moved = members.removeValue(forKey: from), members[to] == nil { members[to] = moved }
                return .object(members)
            case .array(let values): return .array(values.map(renamed))
            case .string(from): return .string(to)
            default: return value
            }
        }
        return renamed(value).jsonText
    }
}
