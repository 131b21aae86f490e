import GRDB

/// The queue's operations counted per table, for monitoring (the dashboard's `/metrics`).
public struct TableQueueCounts: Sendable, Equatable {
    /// Changes waiting to be pushed (pending, attempted or being sent).
    public var waiting: Int = 0
    /// Changes in conflict with the service's copy.
    public var conflicts: Int = 0

    /// Counts of a table (none by default).
    public init(waiting: Int = 0, conflicts: Int = 0) {
        self.waiting = waiting
        self.conflicts = conflicts
    }
}

extension SyncOperationQueue {
    /// How many operations of each table are waiting and in conflict, by one grouped query.
    func countsByTable(_ db: Database) throws -> [String: TableQueueCounts] {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT tableName, state, COUNT(*) FROM __operations GROUP BY tableName, state"))
        var counts: [String: TableQueueCounts] = [:]
        for row in rows {
            let table: String = row[0]
            let count: Int = row[2]
            let state = OperationState(rawValue: row[1]) ?? .pending
            if state.isWaiting {
                counts[table, default: TableQueueCounts()].waiting += count
            } else if state == .conflict {
                counts[table, default: TableQueueCounts()].conflicts += count
            }
        }
        return counts
    }
}

extension SyncContext {
    /// Each table's waiting changes and conflicts (tables with no operation are absent).
    public nonisolated func operationCountsByTable() throws(SyncError) -> [String: TableQueueCounts] {
        try read { [queue] db in try queue.countsByTable(db) }
    }
}
