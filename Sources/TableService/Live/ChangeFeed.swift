import Foundation
import Synchronization

/// Who waits for which table's changes in this process, and who is woken by a commit.
///
/// The store tells it of every write it committed (SQLite: the store itself, once the write is
/// durable; PostgreSQL: ``PostgresChangeBus``, for writes on every instance, once no row can
/// commit behind them).
/// A subscriber is woken when a commit it may see lands past its cursor; it is then told the
/// newest cursor only (wake-ups coalesce: the client pulls from its own position anyway). Waiting
/// costs no query and no thread: a subscription is an entry here and a suspended task.
final class ChangeFeed: Sendable {
    /// One commit, as the feed hears of it.
    struct Commit: Sendable {
        let table: String
        let cursor: ChangeCursor
        /// The row's owner in a per-user table; nil in a shared table (or when a writer with
        /// access to every row, such as the service page, changed it: then every subscriber wakes).
        let owner: String?
    }

    private struct Subscriber {
        let owner: String?
        var after: ChangeCursor
        let continuation: AsyncStream<ChangeCursor>.Continuation
    }

    private struct State {
        var subscribers: [String: [UInt64: Subscriber]] = [:]
        var count = 0
        var lastKey: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())
    /// Subscriptions beyond this are refused (``subscribe(table:owner:after:)`` returns nil).
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Subscriptions open now.
    var subscriberCount: Int { state.withLock { $0.count } }

    /// Whether someone waits on `table` (lowercased).
    func isSubscribed(_ table: String) -> Bool {
        state.withLock { state in state.subscribers[table].map { !$0.isEmpty } ?? false }
    }

    /// The tables someone waits on (lowercased).
    var subscribedTables: [String] {
        state.withLock { state in state.subscribers.compactMap { $0.value.isEmpty ? nil : $0.key } }
    }

    /// Starts waiting for commits of `table` past `after` that `owner` may see (nil: every row).
    /// Nil when ``limit`` subscriptions are open, or the feed is closed. The stream ends when the
    /// caller stops iterating or cancels, or when the feed closes.
    func subscribe(table: String, owner: String?, after: ChangeCursor) -> AsyncStream<ChangeCursor>? {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeCursor.self, bufferingPolicy: .bufferingNewest(1))
        let key = state.withLock { state -> UInt64? in
            guard !state.closed, state.count < limit else { return nil }
            state.lastKey += 1
            state.count += 1
            state.subscribers[table.lowercased(), default: [:]][state.lastKey] = Subscriber(
                owner: owner, after: after, continuation: continuation)
            return state.lastKey
        }
        guard let key else { return nil }
        let name = table.lowercased()
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                guard state.subscribers[name]?.removeValue(forKey: key) != nil else { return }
                state.count -= 1
            }
        }
        return stream
    }

    /// Wakes the subscribers of `table` whose cursor is before `cursor`, if they may see the row.
    func published(_ commit: Commit) {
        let woken = state.withLock { state -> [AsyncStream<ChangeCursor>.Continuation] in
            let name = commit.table.lowercased()
            guard var subscribers = state.subscribers[name] else { return [] }
            var woken: [AsyncStream<ChangeCursor>.Continuation] = []
            for (key, subscriber) in subscribers where subscriber.after < commit.cursor {
                guard subscriber.owner == nil || commit.owner == nil || subscriber.owner == commit.owner else {
                    continue
                }
                subscribers[key]?.after = commit.cursor
                woken.append(subscriber.continuation)
            }
            state.subscribers[name] = subscribers
            return woken
        }
        for continuation in woken { continuation.yield(commit.cursor) }
    }

    /// Wakes every subscriber of every table with its own cursor: after the feed may have missed
    /// commits (a listening connection that was lost), each client pulls once and misses nothing.
    func wakeAll() {
        let all = state.withLock { state in state.subscribers.values.flatMap { $0.values } }
        for subscriber in all { subscriber.continuation.yield(subscriber.after) }
    }

    /// Ends every subscription; none opens afterwards (the service is stopping).
    func close() {
        let all = state.withLock { state in
            state.closed = true
            return state.subscribers.values.flatMap { $0.values }
        }
        for subscriber in all { subscriber.continuation.finish() }
    }
}
