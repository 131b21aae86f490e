import GRDB

/// The queue's operations counted per table, for monitoring (the dashboard's `/metrics`).
public struct TableQueueCounts: Sendable, Equatable {
    /// Changes waiting to be pushed (pending, attempted or being sent; not held).
    public var waiting: Int = 0
    /// Changes in conflict with the service's copy.
    public var conflicts: Int = 0
    /// Changes a person holds back from pushes (counted here only).
    public var held: Int = 0

    /// Counts of a table (none by default).
    public init(waiting: Int = 0, conflicts: Int = 0, held: Int = 0) {
        self.waiting = waiting
        self.conflicts = conflicts
        self.held = held
    }
}

extension SyncOperationQueue {
    /// How many operations of each table are waiting, in conflict and held, by one grouped query.
    func countsByTable(_ db: Database) throws -> [String: TableQueueCounts] {
        let held = (Columns.heldAt != nil).forKey("held")
        let rows = try Row.fetchAll(
            db,
            OperationRecord.select(Columns.tableName, Columns.state, GRDB.count(Column.rowID).forKey("count"), held)
                .group(Columns.tableName, Columns.state, Columns.heldAt != nil))
        var counts: [String: TableQueueCounts] = [:]
        for row in rows {
            let table: String = row[Columns.tableName]
            let count: Int = row["count"]
            let state: OperationState = try OperationRecord.known(row, Columns.state)
            if row["held"] as Bool {
                counts[table, default: TableQueueCounts()].held += count
            } else if state.isWaiting {
                counts[table, default: TableQueueCounts()].waiting += count
            } else if state == .conflict {
                counts[table, default: TableQueueCounts()].conflicts += count
            }
        }
        return counts
    }
}
