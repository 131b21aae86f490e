import Foundation
import Logging
import NIOSSL
import PostgresNIO
import SyncProtocol
import Synchronization

/// How the instances sharing a PostgreSQL database tell each other's subscribers of their writes,
/// off the commit path: no write waits for a notification.
///
/// - **Out.** An instance collects the commits of its writes and sends them in batches with one
///   `pg_notify` each (whatever gathered while the previous batch was being sent). NOTIFY takes a
///   database-wide lock until its transaction ends; here that is the batch's own short
///   transaction, not a write's.
/// - **In.** Each instance keeps one connection listening. Whenever listening starts, the first
///   time included, every subscriber is woken once: it reads the table's cursor itself, so a
///   notification lost with the connection is not a change lost.
/// - **Sweep.** Once a second, for each table someone here waits on, the instance reads the rows
///   past the newest commit it heard of: writes whose notification never came (their instance was
///   killed between its commit and its batch) and writes made by SQL outside todosync wake their
///   subscribers within a second.
/// - **Horizon.** Commits heard (its own, the others', the sweep's) wait until they are below the
///   horizon (``PostgresHorizon``) before they wake anyone: a subscriber told a cursor finds every
///   row up to it when it pulls, and no row commits behind it later.
///
/// A payload is `{"from": instance, "commits": [["table", updatedAt, "id", "owner" or null], …]}`.
final class PostgresChangeBus: Sendable {
    static let channel = "todosync_changes"
    /// A batch's payload stays under PostgreSQL's 8,000 bytes.
    static let payloadLimit = 7_000
    /// How often the sweep runs.
    static let sweepInterval = Duration.seconds(1)
    /// The least time between two batches: each is a query and a notification every listening
    /// instance wakes for, so under load a batch gathers what a few milliseconds bring (at most
    /// 200 a second per instance), which the others' subscribers wait for at most.
    static let batchGap = Duration.milliseconds(5)

    private struct State {
        /// This instance's commits not yet sent, the newest per table and owner.
        var outgoing: [Key: ChangeFeed.Commit] = [:]
        /// Commits waiting for the horizon before they wake anyone here.
        var pending: [ChangeFeed.Commit] = []
        /// The newest commit heard of per table (lowercased): where the sweep reads from.
        var heard: [String: ChangeCursor] = [:]
    }

    private struct Key: Hashable {
        let table: String
        let owner: String?
    }

    let feed: ChangeFeed
    /// Whether this instance's commits are sent (``PostgresLocation/announcesChanges``).
    let announces: Bool
    /// Tells this instance's notifications from the others'.
    let instance = UUID().uuidString
    /// How this instance's payloads begin.
    private var ownPrefix: String { "{\"from\":\(JSONValue.string(instance).jsonText)," }
    private let state = Mutex(State())
    private let sending = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let advancing = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(feed: ChangeFeed, announces: Bool = true) {
        self.feed = feed
        self.announces = announces
    }

    /// A write of this instance committed.
    func committed(_ commit: ChangeFeed.Commit) {
        guard announces else { return heard([commit]) }
        state.withLock { state in Self.keepNewest(commit, in: &state.outgoing) }
        sending.continuation.yield()
        heard([commit])
    }

    /// Commits learnt of (this instance's, another's, the sweep's): each wakes this instance's
    /// subscribers once it is below the horizon.
    func heard(_ commits: [ChangeFeed.Commit]) {
        let waiting = state.withLock { state in
            for commit in commits {
                let table = commit.table.lowercased()
                if state.heard[table].map({ $0 < commit.cursor }) ?? true { state.heard[table] = commit.cursor }
                if feed.isSubscribed(table) { state.pending.append(commit) }
            }
            return !state.pending.isEmpty
        }
        if waiting { advancing.continuation.yield() }
    }

    /// Sends, listens, releases and sweeps until cancelled (the store closing).
    func run(_ store: PostgresTableStore) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.send(through: store) }
            group.addTask {
                // A connection lost may be a cluster restored to an earlier point: the epoch is read again.
                await self.listen(store.location, logger: store.logger) { await store.refreshEpoch() }
            }
            group.addTask { await self.release(below: store) }
            group.addTask { await self.sweep(store) }
            await group.waitForAll()
        }
    }

    // MARK: Out

    private func send(through store: PostgresTableStore) async {
        for await _ in sending.stream {
            let commits = state.withLock { state in
                defer { state.outgoing.removeAll(keepingCapacity: true) }
                return Array(state.outgoing.values)
            }
            for payload in payloads(commits) {
                do {
                    var statement = PostgresStatement()
                    statement.sql =
                        "SELECT pg_notify(\(statement.bind(.text(Self.channel))), \(statement.bind(.text(payload))))::text"
                    _ = try await store.values(statement) { _ in () }
                } catch {
                    // The others' sweep finds these rows within a second.
                    store.logger.warning("the change channel could not tell the other instances of a write: \(error)")
                }
            }
            try? await Task.sleep(for: Self.batchGap)
        }
    }

    /// The commits as payloads of at most ``payloadLimit`` bytes.
    func payloads(_ commits: [ChangeFeed.Commit]) -> [String] {
        var payloads: [String] = []
        var entries: [String] = []
        var size = 0
        func flush() {
            guard !entries.isEmpty else { return }
            payloads.append(ownPrefix + "\"commits\":[\(entries.joined(separator: ","))]}")
            entries = []
            size = 0
        }
        for commit in commits {
            let entry = JSONValue.array([
                .string(commit.table), .number(Double(commit.cursor.updatedAt)), .string(commit.cursor.id),
                commit.owner.map(JSONValue.string) ?? .null,
            ]).jsonText
            if size + entry.count + 100 > Self.payloadLimit { flush() }
            entries.append(entry)
            size += entry.count + 1
        }
        flush()
        return payloads
    }

    // MARK: In

    /// The commits of another instance's payload; nil for this instance's own, or a payload that
    /// is not one.
    func commits(_ payload: String) -> [ChangeFeed.Commit]? {
        // This instance's own, told apart without decoding them.
        guard !payload.hasPrefix(ownPrefix),
            case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
            case .string(let from)? = object["from"], from != instance,
            case .array(let entries)? = object["commits"]
        else { return nil }
        return entries.compactMap { entry in
            guard case .array(let parts) = entry, parts.count == 4, case .string(let table) = parts[0],
                case .number(let stamp) = parts[1], case .string(let id) = parts[2]
            else { return nil }
            return ChangeFeed.Commit(
                table: table, cursor: ChangeCursor(updatedAt: Int64(stamp), id: id), owner: parts[3].stringValue)
        }
    }

    /// Listens until cancelled; reconnects after a failure with a growing pause. `onListening` runs
    /// each time it listens again after a lost connection.
    func listen(
        _ location: PostgresLocation, logger: Logger, onListening: @escaping @Sendable () async -> Void = {}
    ) async {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try location.connectionConfiguration()
        } catch {
            logger.error("the change channel cannot listen to PostgreSQL (TLS): \(error)")
            return
        }
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 0, logger: logger)
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        // Listening now: whatever was written before, subscribers read their cursor once.
                        if failures > 0 { await onListening() }
                        feed.wakeAll()
                        failures = 0
                        for try await notification in notifications {
                            if let commits = commits(notification.payload) { heard(commits) }
                        }
                    }
                    try? await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch {
                if Task.isCancelled { return }
                if failures == 0 { logger.warning("the change channel's PostgreSQL connection was lost: \(error)") }
            }
            failures += 1
            let pause = min(30, 0.25 * pow(2, Double(min(failures - 1, 10))))
            guard (try? await Task.sleep(for: .seconds(pause))) != nil else { return }
        }
    }

    // MARK: Horizon

    /// Wakes subscribers with the commits that are below the horizon, reading it again (about once
    /// a millisecond) while some still wait.
    private func release(below store: PostgresTableStore) async {
        for await _ in advancing.stream {
            while !Task.isCancelled {
                guard state.withLock({ !$0.pending.isEmpty }), let reading = try? await store.horizon() else { break }
                let ready = state.withLock { state in
                    let ready = state.pending.filter { $0.cursor.updatedAt < reading.horizon }
                    state.pending.removeAll { $0.cursor.updatedAt < reading.horizon }
                    return ready
                }
                var newest: [Key: ChangeFeed.Commit] = [:]
                for commit in ready { Self.keepNewest(commit, in: &newest) }
                for commit in newest.values { feed.published(commit) }
                guard state.withLock({ !$0.pending.isEmpty }) else { break }
                try? await Task.sleep(for: reading.untilNextMillisecond)
            }
        }
    }

    /// Keeps `commit` in `commits` unless a newer one of its table and owner is there: a
    /// subscriber pulls from its own position, so the newest commit stands for the others.
    private static func keepNewest(_ commit: ChangeFeed.Commit, in commits: inout [Key: ChangeFeed.Commit]) {
        let key = Key(table: commit.table.lowercased(), owner: commit.owner)
        if commits[key].map({ $0.cursor < commit.cursor }) ?? true { commits[key] = commit }
    }

    // MARK: Sweep

    private func sweep(_ store: PostgresTableStore) async {
        while (try? await Task.sleep(for: Self.sweepInterval)) != nil {
            for table in feed.subscribedTables {
                guard let schema = store.schema(of: table) else { continue }
                let from = state.withLock { $0.heard[table] }
                do {
                    let commits = try await store.commits(in: schema.name, after: from)
                    if from == nil {
                        // The first look: where to read from next time.
                        if let last = commits.last { state.withLock { $0.heard[table] = last.cursor } }
                    } else {
                        heard(commits)
                    }
                } catch {
                    continue
                }
            }
        }
    }
}

extension PostgresTableStore {
    /// The commits of `table` past `cursor` (at most 1,000), or its newest one when `cursor` is nil.
    func commits(in table: String, after cursor: ChangeCursor?) async throws(TableError) -> [ChangeFeed.Commit] {
        var statement = PostgresStatement()
        let quoted = SQLDialect.quoted(table)
        statement.sql =
            "SELECT \"updatedAt\", \"id\", to_jsonb(\(quoted).*) ->> '\(RowScope.ownerColumn)' FROM \(quoted)"
        if let cursor {
            statement.sql +=
                " WHERE (\"updatedAt\", \"id\") > (\(statement.bind(.integer(cursor.updatedAt))), "
                + "\(statement.bind(.text(cursor.id)))) ORDER BY \"updatedAt\", \"id\" LIMIT 1000"
        } else {
            statement.sql += " ORDER BY \"updatedAt\" DESC, \"id\" DESC LIMIT 1"
        }
        return try await values(statement) { row in
            let (updatedAt, id, owner) = try row.decode((Int64, String, String?).self)
            return ChangeFeed.Commit(table: table, cursor: ChangeCursor(updatedAt: updatedAt, id: id), owner: owner)
        }
    }
}
