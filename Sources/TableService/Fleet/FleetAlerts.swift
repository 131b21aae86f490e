import AsyncHTTPClient
import Background
import Foundation
import Logging
import NIOCore
import SyncProtocol
import Synchronization

/// Stall alerts: a device that becomes stalled opens an episode, which ends when it is stalled no
/// more. Each is claimed in the database once (`__fleet_alerts`, unique per episode), so that of
/// the instances sharing a PostgreSQL database exactly one records it and POSTs it to the webhook,
/// off the request path, tried again with backoff when the receiver fails or hangs.
final class FleetAlerts: Sendable {
    /// One alert as `GET /service/api/alerts` and the webhook show it.
    struct Alert: Sendable, Encodable, Equatable {
        let id: Int64
        let event: String
        let device: String
        let table: String
        let state: String
        let since: String
        let at: String
    }

    /// An episode open on this instance: the device's stall at one position of one table.
    struct Episode: Sendable, Equatable {
        let key: String
        let table: String
        let since: Int64
    }

    /// Tries of one webhook POST, and the longest pause between two.
    static let attempts = 10
    static let longestPause: Duration = .seconds(60)

    private let fleet: Fleet
    /// This instance, in the alerts it claims.
    private let instance = UUID().uuidString
    private let webhook: URL?
    private let open = Mutex<[String: Episode]>([:])
    /// Where deliveries run: children of the service's background work.
    private let work: BackgroundWork
    private let client: HTTPClient?
    private let logger: Logger
    /// The pause before try n (1-based) after a failure; tests shorten it.
    private let pause: @Sendable (Int) -> Duration
    /// What the pauses between tries wait on.
    private let timers: any Clock<Duration>

    /// 1, 2, 4 … seconds before the n-th try, at most ``longestPause``.
    static let backoff: @Sendable (Int) -> Duration = { attempt in
        min(longestPause, .seconds(1 << min(attempt - 1, 6)))
    }

    init(
        fleet: Fleet, webhook: URL?, work: BackgroundWork, timers: any Clock<Duration> = ContinuousClock(),
        logger: Logger, pause: @escaping @Sendable (Int) -> Duration = backoff
    ) {
        self.fleet = fleet
        self.work = work
        self.timers = timers
        self.webhook = webhook
        self.logger = logger
        self.pause = pause
        if webhook != nil {
            var configuration = HTTPClient.Configuration()
            // A receiver is told, never followed elsewhere.
            configuration.redirectConfiguration = .disallow
            configuration.timeout = .init(connect: .seconds(5), read: .seconds(10))
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        } else {
            client = nil
        }
    }

    /// The open episodes the database holds (alerts of a stall without a recovery), at start.
    func loadOpenEpisodes() async {
        let sql = """
            SELECT "episode", "device", "tableName", "since" FROM "__fleet_alerts" AS "a" WHERE "event" = 'stalled'
            AND NOT EXISTS (SELECT 1 FROM "__fleet_alerts" AS "b" WHERE "b"."episode" = "a"."episode" || '|recovered')
            """
        guard let rows = try? await fleet.store.query(SQLStatement(sql: sql)) else { return }
        open.withLock { open in
            for row in rows {
                guard let key = try? row.text("episode"), let device = try? row.text("device"),
                    let table = try? row.text("tableName"), let since = try? row.integer("since")
                else { continue }
                open[device] = Episode(key: key, table: table, since: since)
            }
        }
    }

    /// One pass: the states now, lag samples, and the episodes they open or end.
    func evaluate() async {
        let now = fleet.clock()
        for device in await fleet.assessments(now: now) {
            let id = device.record.id
            fleet.sampleLag(id, seconds: device.lagSeconds, at: now)
            let stalled = device.tables.first { $0.verdict.state == .stalled }?.name
            let episode = open.withLock { $0[id] }
            switch (stalled, episode) {
            case (let table?, nil) where device.state != .offline:
                let progress = device.record.tables[table]
                let since = progress?.rowsPastSince ?? now
                let key = "\(id)|\(table)|\(progress?.position.map(Fleet.text) ?? "")"
                open.withLock { $0[id] = Episode(key: key, table: table, since: since) }
                await claim(
                    episode: key, event: "stalled", device: id, table: table, state: "stalled", since: since, at: now)
            case (nil, let episode?):
                open.withLock { $0[id] = nil }
                await claim(
                    episode: episode.key + "|recovered", event: "recovered", device: id, table: episode.table,
                    state: device.state.rawValue, since: episode.since, at: now)
            default:
                break
            }
        }
    }

    /// Records the alert unless another instance (or this one before a restart) did, and then sends it.
    private func claim(
        episode: String, event: String, device: String, table: String, state: String, since: Int64, at: Int64
    ) async {
        let insert = SQLStatement(
            sql: """
                INSERT INTO "__fleet_alerts" ("episode", "event", "device", "tableName", "state", "since", "at", "claimedBy")
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT ("episode") DO NOTHING
                """,
            values: [
                .text(episode), .text(event), .text(device), .text(table), .text(state), .integer(since), .integer(at),
                .text(instance),
            ])
        let claimed: [SQLRow]
        do {
            try await fleet.store.execute([insert])
            claimed = try await fleet.store.query(
                SQLStatement(
                    sql: "SELECT \"id\", \"claimedBy\" FROM \"__fleet_alerts\" WHERE \"episode\" = ?",
                    values: [.text(episode)]))
        } catch {
            logger.warning("the fleet alert for \(device) could not be recorded: \(error)")
            return
        }
        // The instance whose row it is sends it.
        guard let row = claimed.first, (try? row.text("claimedBy")) == instance, let id = try? row.integer("id") else {
            return
        }
        logger.notice("device \(device) \(event == "stalled" ? "is stalled on \(table)" : "recovered (\(state))")")
        send(
            Alert(
                id: id, event: event, device: device, table: table, state: state,
                since: ProtocolDate.format(milliseconds: since), at: ProtocolDate.format(milliseconds: at)))
    }

    /// The newest alerts, at most `limit`.
    func recent(limit: Int = 50) async -> [Alert] {
        let sql = """
            SELECT "id", "event", "device", "tableName", "state", "since", "at" FROM "__fleet_alerts"
            ORDER BY "id" DESC LIMIT \(limit)
            """
        guard let rows = try? await fleet.store.query(SQLStatement(sql: sql)) else { return [] }
        return rows.compactMap { row in
            guard let id = try? row.integer("id"), let event = try? row.text("event"),
                let device = try? row.text("device"),
                let table = try? row.text("tableName"), let state = try? row.text("state"),
                let since = try? row.integer("since"), let at = try? row.integer("at")
            else { return nil }
            return Alert(
                id: id, event: event, device: device, table: table, state: state,
                since: ProtocolDate.format(milliseconds: since), at: ProtocolDate.format(milliseconds: at))
        }
    }

    /// POSTs `alert` to the webhook in a task of its own (never on a request's path), trying again
    /// after a pause while the receiver fails, up to ``attempts`` times.
    private func send(_ alert: Alert) {
        guard let webhook, let client else { return }
        let body = JSONValue.object([
            "event": .string(alert.event), "id": .string(alert.device), "state": .string(alert.state),
            "table": .string(alert.table), "since": .string(alert.since), "at": .string(alert.at),
        ]).jsonText
        let (logger, pause, timers) = (logger, pause, timers)
        // One job per alert, which a stop cancels: a hanging receiver delays nothing else.
        work.run {
            for attempt in 1...Self.attempts {
                var request = HTTPClientRequest(url: webhook.absoluteString)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
                do {
                    let response = try await client.execute(request, timeout: .seconds(10))
                    _ = try? await response.body.collect(upTo: 64 << 10)
                    if (200..<300).contains(response.status.code) { return }
                    logger.warning("the alert webhook answered \(response.status.code) (try \(attempt))")
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("the alert webhook could not be reached (try \(attempt)): \(error)")
                }
                if attempt == Self.attempts { break }
                try? await timers.sleep(for: pause(attempt))
                if Task.isCancelled { return }
            }
            logger.error(
                "the alert for \(alert.device) (\(alert.event)) was not delivered after \(Self.attempts) tries")
        }
    }

    /// Shuts the webhook's client down, once the deliveries have ended (the service's background
    /// work stopped).
    func shutDown() async {
        try? await client?.shutdown()
    }
}

extension Fleet {
    /// Adds a lag sample of `id` (saved only when it adds one or raises the latest).
    func sampleLag(_ id: String, seconds: Int64, at now: Int64) {
        state.withLock { state in
            guard var record = state.devices[id] else { return }
            let before = record.lag
            record.sampleLag(seconds, at: now)
            guard record.lag != before else { return }
            state.devices[id] = record
            state.unsaved.insert(id)
            state.revision &+= 1
        }
    }
}
