import GRDB
import Synchronization

/// Brings the counts and search indexes of tables up to their rows in the background after a pull,
/// one chunk of rows per write transaction, so a local edit waits for one chunk at most. See
/// ``ListIndex``.
///
/// At most one catch-up runs per table; asking again while it runs makes it look once more
/// before it ends, so rows written meanwhile are never left behind. A catch-up that fails (the
/// disk is full, the store went away) stops: searches stay complete (they scan the rows past the
/// mark, and counts add them), and the next pull or the next opening of the store starts it again.
final class ListIndexer: Sendable {
    /// Rows caught up per write transaction (about 50 ms of work).
    static let chunk = 5_000

    private struct Run {
        var task: Task<Void, Never>?
        var again = false
    }

    private let runs = Mutex<[String: Run]>([:])
    /// The tables as they are now: a chunk counts the columns its table has when it runs (a flag
    /// column added while a catch-up runs is counted from its next chunk on).
    private let catalog: TableCatalog?

    init(catalog: TableCatalog? = nil) {
        self.catalog = catalog
    }
    /// Set when the store closes: no chunk starts after that.
    private let stopped = Atomic<Bool>(false)

    /// Starts catching `index` up in `pool`, unless that is already under way.
    func catchUp(_ index: ListIndex, in pool: DatabasePool) {
        runs.withLock { runs in
            guard !stopped.load(ordering: .acquiring) else { return }
            if runs[index.table] != nil {
                runs[index.table]?.again = true
                return
            }
            runs[index.table] = Run()
            // Unstructured: the catching up serves every reader of the store, not the write that
            // began it, and stops with the store. At the default priority: a utility task waited
            // minutes for a thread on a loaded machine, while the counts and searches it serves
            // stay slower until it is done.
            runs[index.table]?.task = Task.detached { [self] in
                var taken = 0
                repeat {
                    do {
                        while !stopped.load(ordering: .acquiring) {
                            let rows = try await pool.write { db in
                                try self.current(index, db).catchUp(db, limit: Self.chunk)
                            }
                            guard rows > 0 else { break }
                            taken += rows
                        }
                        if taken >= Self.mergeAfter {
                            try await merge(index, in: pool)
                            taken = 0
                        }
                    } catch {
                        _ = self.runs.withLock { $0.removeValue(forKey: index.table) }
                        return
                    }
                } while !finished(index.table)
            }
        }
    }

    /// Rows taken in by one catch-up after which its search index is merged (``SearchIndex/merge(_:starting:)``):
    /// two chunks or more leave b-trees that every search reads.
    static let mergeAfter = 2 * chunk

    /// The table's list index as it is now: a chunk counts the columns its table has when it runs.
    private func current(_ index: ListIndex, _ db: Database) -> ListIndex {
        catalog?.entry(index.table, for: db)?.listIndex ?? index
    }

    /// Merges the search index's b-trees into one, a step per write transaction (each ~10 ms).
    private func merge(_ index: ListIndex, in pool: DatabasePool) async throws {
        var starting = true
        while !stopped.load(ordering: .acquiring) {
            let first = starting
            let more = try await pool.write { db in try self.current(index, db).search?.merge(db, starting: first) }
            guard more == true else { return }
            starting = false
        }
    }

    /// Ends the catch-up of `table`, unless it was asked for again while it ran: then it looks once
    /// more (and true is returned only when it ended). One lock, so that no asking falls between.
    private func finished(_ table: String) -> Bool {
        runs.withLock { runs in
            if runs[table]?.again == true {
                runs[table]?.again = false
                return false
            }
            runs[table] = nil
            return true
        }
    }

    /// Starts no more chunks (the store is closing); the rows left are caught up when it opens again.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// Returns when no catch-up runs.
    func idle() async {
        while let task = runs.withLock({ $0.values.lazy.compactMap(\.task).first }) {
            await task.value
        }
    }
}
