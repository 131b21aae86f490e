import Foundation
import GRDB
import Synchronization

/// One committed write transaction of the store.
public struct StoreChange: Sendable, Equatable {
    /// Counts the store's commits in this process, from 1; later commits have larger revisions.
    public let revision: UInt64
    /// The SQLite tables it wrote: data tables (`todoitem`) and the store's own (`__operations`
    /// for the queue, `__errors` for conflicts, `__journal`...).
    public let tables: Set<String>
    /// Whether it is a local insert, edit or delete queued for the service (a ``SyncTable`` write),
    /// rather than a pull, a push, a decision or the store's own bookkeeping.
    public let isLocalEdit: Bool
}

/// Tells, after each commit of the store in this process, which tables it wrote, whoever wrote
/// them: a pull, a push, a local edit, a conflict decision. Pages and auto-sync follow the store
/// through it instead of asking it again and again.
///
/// A GRDB transaction observer on the writer: it sees every row change of a transaction and is told
/// when the transaction commits, on the writer's queue, so commits are told in their order.
final class StoreChanges: TransactionObserver, Sendable {
    private struct State {
        var touched: Set<String> = []
        /// The transaction under way queued a local edit (``markLocalEdit()``).
        var localEdit = false
        var revision: UInt64 = 0
        var watchers: [UUID: AsyncStream<StoreChange>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// The latest commit's revision (0 before the first).
    var revision: UInt64 { state.withLock { $0.revision } }

    /// Every commit from now on, in order. A watcher that falls more than 64 commits behind loses the
    /// oldest (the writer never waits for a watcher): it should read the store again, not replay.
    func changes() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreChange.self, bufferingPolicy: .bufferingNewest(64))
        let key = UUID()
        state.withLock { $0.watchers[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: key) }
        }
        return stream
    }

    /// The commits that queued a local insert, edit or delete, from now on: what auto-sync listens
    /// to. The same stream as ``changes()``, filtered.
    func localEdits() -> some AsyncSequence<Void, Never> & Sendable {
        changes().filter(\.isLocalEdit).map { _ in () }
    }

    /// Marks the transaction under way, on the writer, as one that queued a local edit: its commit
    /// is told with ``StoreChange/isLocalEdit``.
    func markLocalEdit() {
        state.withLock { $0.localEdit = true }
    }

    func finishAll() {
        let watchers = state.withLock { state in
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }

    /// Asked before each statement runs: a table already written in this transaction needs no row
    /// of it told one by one (a pull page's upserts are many statements of many rows each; every
    /// row told cost 6 % of a pull's time).
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        let table = eventKind.tableName
        return !state.withLock { $0.touched.contains(table) }
    }

    func databaseDidChange(with event: DatabaseEvent) {
        let table = event.tableName
        state.withLock { _ = $0.touched.insert(table) }
    }

    func databaseDidCommit(_ db: Database) {
        let (change, watchers) = state.withLock { state -> (StoreChange?, [AsyncStream<StoreChange>.Continuation]) in
            defer { (state.touched, state.localEdit) = ([], false) }
            guard !state.touched.isEmpty else { return (nil, []) }
            state.revision += 1
            let change = StoreChange(revision: state.revision, tables: state.touched, isLocalEdit: state.localEdit)
            return (change, Array(state.watchers.values))
        }
        guard let change else { return }
        for watcher in watchers { watcher.yield(change) }
    }

    func databaseDidRollback(_ db: Database) {
        state.withLock { state in (state.touched, state.localEdit) = ([], false) }
    }
}
