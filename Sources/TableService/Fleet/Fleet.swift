import Foundation
import HTTPServer
import Logging
import SyncProtocol
import Synchronization

/// The devices that sync with the service, learned from their requests alone (see `docs/fleet.md`):
/// per device and table, where it pulls from, when it pushed, its errors, its client; its state from
/// its progress (``DeviceStateRule``).
///
/// A request notes what it learned in memory; ``FleetBookkeeping`` saves the devices noted since
/// the last save in one transaction a second (`__devices`), and, where other instances write the same
/// PostgreSQL database, folds in what they saved. Saving on each request would add a database round
/// trip (and on SQLite a durable commit) to every request, for a view its readers need within a
/// second or two; a power cut loses at most the last second, which the device's next request
/// restores. At most ``limit`` devices are kept, the least recent contact forgotten first, so made-up
/// ids cannot grow it without end.
final class Fleet: Sendable {
    /// The most devices kept.
    static let limit = 10_000
    /// Rows past a position counted at most.
    static let lagCountLimit = 10_000

    struct State {
        var devices: [String: DeviceRecord] = [:]
        /// Ids noted since the last save.
        var unsaved: Set<String> = []
        /// `savedAt` of the newest row read from the database (instances sharing it).
        var readUpTo: Int64 = 0
        /// Rows waiting past a position, per table, user and start, read at most once a second.
        var waiting: [WaitingKey: (read: Int64, rows: RowsWaiting?)] = [:]
        /// Whether the database's devices were read at start.
        var loaded = false
        /// Counts every change of ``devices``.
        var revision: UInt64 = 0
        /// The latest judgement of every device, for the revision and time it was made at.
        var assessed: (revision: UInt64, at: Int64, snapshot: FleetSnapshot)?
    }

    struct WaitingKey: Hashable {
        var table: String
        var owner: String?
        var from: Int64
    }

    let clock: @Sendable () -> Int64
    let thresholds: FleetThresholds
    let store: any TableStorage
    let logger: Logger
    /// The per-user tables: a device's head there is its user's newest row.
    let perUserTables: Set<String>
    let state = Mutex(State())
    let metrics: ServiceMetrics
    /// The users and devices whose access an admin revoked.
    let revocations: Revocations
    /// What revoked devices deposited, and the receipts of their wipes.
    let escrow: Escrow

    init(
        clock: @escaping @Sendable () -> Int64, thresholds: FleetThresholds, store: any TableStorage,
        perUserTables: [String], metrics: ServiceMetrics, logger: Logger
    ) {
        self.clock = clock
        self.thresholds = thresholds
        self.store = store
        self.perUserTables = Set(perUserTables.map { $0.lowercased() })
        self.metrics = metrics
        self.logger = logger
        revocations = Revocations(store: store)
        escrow = Escrow(store: store, clock: clock)
    }

    // MARK: Noting requests

    /// Notes a request of `device` to `table` answered with `response` in `style`; returns whether
    /// an admin waits for the device's support bundle.
    func noteRequest(
        _ device: DeviceIdentity, _ request: Request, style: ProtocolStyle, table: String?, user: String?,
        response: Response
    ) -> Bool {
        let now = clock()
        let status = Int(response.status.code)
        let isWrite = request.method != .get && request.method != .head && request.method != .options
        let answer: DeviceRecord.ServiceAnswer? =
            status >= 400
            ? DeviceRecord.ServiceAnswer(
                at: now, method: request.method.rawValue, path: String(request.path.prefix(200)), status: status,
                message: Self.message(of: response))
            : nil
        let userAgent = request.headers[.userAgent]
        return update(device.id, at: now) { record in
            if let userAgent, record.userAgent.map({ !userAgent.hasPrefix($0) }) ?? true {
                record.userAgent = String(userAgent.prefix(200))
            }
            if record.protocolName != style.fleetName { record.protocolName = style.fleetName }
            if let user, record.user != user { record.user = user }
            if let reported = device.reported {
                record.reported = reported
                record.reportedAt = now
            }
            if let answer { record.failed(answer) }
            if isWrite, let table, TableService.isValidTableName(table) {
                record.tables[table, default: .init()].lastPush = now
                record.tables[table]?.lastPushStatus = status
            }
        }
    }

    /// Notes an incremental pull of `table` from `position` whose answer held `rowsPast` rows past
    /// it (nil: the pull failed, which leaves what its last answer said).
    func notePull(_ deviceID: String, table: String, from position: PullPosition, rowsPast: Int?) {
        let now = clock()
        update(deviceID, at: now) { record in
            record.tables[table, default: .init()].pulled(from: position, at: now, rows: rowsPast)
        }
    }

    /// Notes that `device` wrote `table` with former column names.
    func noteOldNames(_ deviceID: String, table: String, _ names: [String]) {
        guard !names.isEmpty else { return }
        let now = clock()
        update(deviceID, at: now) { record in
            for name in names { record.oldNames["\(table).\(name)"] = now }
        }
    }

    /// Whether an admin asked for the bundle of `deviceID` and it has not arrived.
    func bundlePending(_ deviceID: String) -> Bool {
        state.withLock { $0.devices[deviceID]?.bundlePending ?? false }
    }

    /// Changes the record of `id` in place (made if new, forgetting the least recent when full);
    /// returns whether an admin waits for its bundle.
    @discardableResult
    func update(_ id: String, at now: Int64, _ change: (inout DeviceRecord) -> Void) -> Bool {
        state.withLock { state in
            if state.devices[id] == nil {
                if state.devices.count >= Self.limit,
                    let oldest = state.devices.values.min(by: { $0.lastContact < $1.lastContact })
                {
                    state.devices[oldest.id] = nil
                    state.unsaved.remove(oldest.id)
                }
                state.devices[id] = DeviceRecord(id: id, lastContact: now)
            }
            // Through the dictionary's own storage: a copy out and back would copy the record's tables.
            change(&state.devices[id]!)
            if state.devices[id]!.lastContact < now { state.devices[id]!.lastContact = now }
            state.unsaved.insert(id)
            state.revision &+= 1
            return state.devices[id]!.bundlePending
        }
    }

    /// The service's message in a JSON error answer (`{"error": "…"}`), cut to 300 characters.
    private static func message(of response: Response) -> String {
        guard response.body.count < 16_384,
            case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            case .string(let text)? = object["error"] ?? object["message"]
        else { return "" }
        return String(text.prefix(300))
    }

    // MARK: Reading

    /// Every device as known now, with the facts other instances saved folded in.
    func records() async -> [DeviceRecord] {
        await recordsAndRevision().records
    }

    /// Every device with the revision of the state it was read from, in one look.
    func recordsAndRevision() async -> (records: [DeviceRecord], revision: UInt64) {
        await loadIfNeeded()
        return state.withLock { (Array($0.devices.values), $0.revision) }
    }

    /// The installations that still write the old shape of some table, most recent first.
    func writingOldShape() async -> [DeviceRecord] {
        await records().filter { !$0.oldNames.isEmpty }.sorted { ($0.lastContact, $0.id) > ($1.lastContact, $1.id) }
    }

    /// The rows `record`'s pull of `table` lacks, read at most once a second per table, user and
    /// start.
    func waiting(_ record: DeviceRecord, table: String, now: Int64) async -> RowsWaiting? {
        guard let progress = record.tables[table], let from = DeviceStateRule.waitingFrom(progress) else { return nil }
        let owner = perUserTables.contains(table.lowercased()) ? record.user : nil
        let key = WaitingKey(table: table, owner: owner, from: from)
        if let cached = state.withLock({ $0.waiting[key] }), now - cached.read < 1000 { return cached.rows }
        let rows: RowsWaiting?
        do {
            rows = try await store.rowsWaiting(in: table, owner: owner, after: from, limit: Self.lagCountLimit)
        } catch {
            return nil
        }
        state.withLock { state in
            if state.waiting.count > 4 * Self.limit { state.waiting.removeAll() }
            state.waiting[key] = (now, rows)
        }
        return rows
    }
}

extension ProtocolStyle {
    /// How the fleet names the protocol a device speaks.
    var fleetName: String {
        switch self {
        case .v3: "v3"
        case .legacy: "2015"
        default: "v2"
        }
    }
}
