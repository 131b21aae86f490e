import SyncProtocol

/// One device as the admin API and pages show it (`docs/fleet.md`): times as ISO 8601 UTC, absent
/// values left out.
struct DeviceReport: Sendable, Encodable {
    let id: String
    let state: DeviceState
    let lastContact: String
    let client: Client
    let user: String?
    let oldNames: [String]
    let tables: [TableReport]
    let errors: [ErrorReport]
    let reported: Reported?
    let bundle: BundleReport?
    /// The worst lag of its tables, in seconds.
    let lagSeconds: Int64
    /// Its lag samples (the device's own answer only).
    var lag: [LagPoint]?

    struct Client: Sendable, Encodable {
        let userAgent: String?
        let `protocol`: String?
    }

    struct TableReport: Sendable, Encodable {
        let name: String
        let state: DeviceState
        let position: String?
        let positionSince: String?
        let lastPull: String?
        let lastPush: String?
        let lastPushStatus: Int?
        let head: String?
        let lagRows: Int
        let lagSeconds: Int64
    }

    struct ErrorReport: Sendable, Encodable {
        let at: String
        let method: String
        let path: String
        let status: Int
        let message: String
    }

    struct Reported: Sendable, Encodable {
        let queue: Int64
        let oldest: Int64
        let conflicts: Int64
        let at: String
    }

    struct BundleReport: Sendable, Encodable {
        let requestedAt: String?
        let receivedAt: String?
    }

    struct LagPoint: Sendable, Encodable {
        let at: String
        let seconds: Int64
    }
}

/// A device judged at one time: its record, each table's verdict and the device's state. Cheap
/// (no text is made), so that a page of 100 among 10,000 devices formats only the 100.
struct DeviceAssessment: Sendable {
    let record: DeviceRecord
    let state: DeviceState
    /// Its tables in name order, with their verdicts and the rows they lack.
    let tables: [(name: String, verdict: DeviceStateRule.TableVerdict, waiting: RowsWaiting?)]
    /// The worst lag of its tables, in seconds.
    var lagSeconds: Int64 { tables.map(\.verdict.lagSeconds).max() ?? 0 }
}

/// Every device judged at one time, with what every page of the list needs of all of them.
struct FleetSnapshot: Sendable {
    let devices: [DeviceAssessment]
    let counts: [DeviceState: Int]
    /// The tables any device pulled or pushed, by name.
    let tableNames: [String]
    /// Positions in ``devices``, the latest contact first (the list's default order).
    let byContact: [Int]

    init(_ devices: [DeviceAssessment]) {
        self.devices = devices
        var counts: [DeviceState: Int] = [:]
        var names = Set<String>()
        for device in devices {
            counts[device.state, default: 0] += 1
            for name in device.record.tables.keys { names.insert(name) }
        }
        self.counts = counts
        tableNames = names.sorted()
        byContact = devices.indices.sorted { a, b in
            let (x, y) = (devices[a].record, devices[b].record)
            return x.lastContact != y.lastContact ? x.lastContact > y.lastContact : x.id > y.id
        }
    }
}

extension Fleet {
    /// Every device judged at `now`, with the list's counts and order (see ``assessments(now:)``).
    func snapshot(now: Int64? = nil) async -> FleetSnapshot {
        let now = now ?? clock()
        await loadIfNeeded()
        let cached = state.withLock { state -> FleetSnapshot? in
            guard let assessed = state.assessed, assessed.revision == state.revision, now >= assessed.at,
                now - assessed.at < 1000
            else { return nil }
            return assessed.snapshot
        }
        if let cached { return cached }
        let (records, revision) = await recordsAndRevision()
        var assessments: [DeviceAssessment] = []
        assessments.reserveCapacity(records.count)
        for record in records {
            assessments.append(await assess(record, now: now))
        }
        let snapshot = FleetSnapshot(assessments)
        state.withLock { $0.assessed = (revision, now, snapshot) }
        return snapshot
    }

    /// Every device judged at `now` (lag read at most once a second per table and position). A
    /// judgement made less than a second before, with no device changed since, is answered again:
    /// a page of 10,000 devices costs what it costs to render.
    func assessments(now: Int64? = nil) async -> [DeviceAssessment] {
        await snapshot(now: now).devices
    }

    func assess(_ record: DeviceRecord, now: Int64) async -> DeviceAssessment {
        var tables: [(name: String, verdict: DeviceStateRule.TableVerdict, waiting: RowsWaiting?)] = []
        let named = record.tables.count < 2 ? Array(record.tables) : record.tables.sorted { $0.key < $1.key }
        for (name, progress) in named {
            let waiting = await self.waiting(record, table: name, now: now)
            tables.append(
                (name, DeviceStateRule.table(progress, waiting: waiting, now: now, thresholds: thresholds), waiting))
        }
        return DeviceAssessment(
            record: record,
            state: DeviceStateRule.device(
                record, tables: tables.map(\.verdict.state), now: now, thresholds: thresholds),
            tables: tables)
    }

    /// One device judged at `now`, nil when never seen.
    func assessment(id: String, now: Int64) async -> DeviceAssessment? {
        guard let record = await records().first(where: { $0.id == id }) else { return nil }
        return await assess(record, now: now)
    }

    /// One device as the API shows it, its lag samples included; nil when never seen.
    func report(id: String) async -> DeviceReport? {
        let now = clock()
        return await assessment(id: id, now: now).map { Self.report($0, now: now, withLag: true) }
    }

    /// What the API and pages show of `assessment`.
    static func report(_ assessment: DeviceAssessment, now: Int64, withLag: Bool = false) -> DeviceReport {
        let record = assessment.record
        let tables = assessment.tables.map { table in
            let progress = record.tables[table.name] ?? .init()
            return DeviceReport.TableReport(
                name: table.name, state: table.verdict.state, position: progress.position.map(Self.text),
                positionSince: progress.positionSince.map(ProtocolDate.format),
                lastPull: progress.lastPull.map(ProtocolDate.format),
                lastPush: progress.lastPush.map(ProtocolDate.format), lastPushStatus: progress.lastPushStatus,
                head: (table.waiting?.newest ?? progress.position?.updatedAt).map(ProtocolDate.format),
                lagRows: table.verdict.lagRows, lagSeconds: table.verdict.lagSeconds)
        }
        return DeviceReport(
            id: record.id, state: assessment.state, lastContact: ProtocolDate.format(milliseconds: record.lastContact),
            client: .init(userAgent: record.userAgent, protocol: record.protocolName), user: record.user,
            oldNames: record.oldNames.keys.sorted(), tables: tables,
            errors: record.errors.reversed().map {
                .init(
                    at: ProtocolDate.format(milliseconds: $0.at), method: $0.method, path: $0.path, status: $0.status,
                    message: $0.message)
            },
            reported: record.reported.map {
                .init(
                    queue: $0.queue, oldest: $0.oldest, conflicts: $0.conflicts,
                    at: ProtocolDate.format(milliseconds: record.reportedAt ?? record.lastContact))
            },
            bundle: record.bundleRequestedAt == nil && record.bundleReceivedAt == nil
                ? nil
                : .init(
                    requestedAt: record.bundleRequestedAt.map(ProtocolDate.format),
                    receivedAt: record.bundleReceivedAt.map(ProtocolDate.format)),
            lagSeconds: assessment.lagSeconds,
            lag: withLag
                ? record.lag.filter { now - $0.at <= DeviceRecord.lagHistory }.map {
                    .init(at: ProtocolDate.format(milliseconds: $0.at), seconds: $0.seconds)
                } : nil)
    }

    /// A position as the API shows it: its time, with the keyset id and the skip when it has them.
    static func text(_ position: PullPosition) -> String {
        var text = ProtocolDate.format(milliseconds: position.updatedAt)
        if !position.id.isEmpty { text += " after id \(position.id)" }
        if position.skip > 0 { text += " skip \(position.skip)" }
        return text
    }
}
