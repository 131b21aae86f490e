import GRDB
import Synchronization

/// The store's tables as they are now: each one's description, page layout and list index.
///
/// Tables and columns are added while the store is open (a table named at runtime, a column a page
/// brings), always inside a write transaction. Until that transaction commits, only the writer
/// connection sees them (``entry(_:for:)``): readers keep the schema of their snapshot. A rollback
/// forgets them.
final class TableCatalog: Sendable {
    /// One table's description and what is worked out from it.
    struct Entry: Sendable {
        let description: TableDescription
        let layout: PageLayout
        let listIndex: ListIndex

        init(_ description: TableDescription) {
            self.description = description
            layout = PageLayout(description)
            listIndex = ListIndex(description)
        }
    }

    private struct State: Sendable {
        var committed: [String: Entry] = [:]
        /// Changes of the running write transaction.
        var uncommitted: [String: Entry] = [:]
    }

    private let state = Mutex(State())

    /// The tables every connection sees.
    var committed: [String: Entry] { state.withLock { $0.committed } }

    /// The entry of `name` as `db` sees it.
    func entry(_ name: String, for db: Database) -> Entry? {
        state.withLock { state in
            if !db.configuration.readonly, let changed = state.uncommitted[name] { return changed }
            return state.committed[name]
        }
    }

    /// Sets the description of a table in the running write transaction of `db`: every connection
    /// sees it once the transaction commits; none if it rolls back.
    func set(_ description: TableDescription, in db: Database) {
        let first = state.withLock { state in
            defer { state.uncommitted[description.name] = Entry(description) }
            return state.uncommitted.isEmpty
        }
        guard first else { return }
        db.afterNextTransaction { [self] _ in
            state.withLock { state in
                state.committed.merge(state.uncommitted) { _, new in new }
                state.uncommitted = [:]
            }
        } onRollback: { [self] _ in
            state.withLock { $0.uncommitted = [:] }
        }
    }
}
