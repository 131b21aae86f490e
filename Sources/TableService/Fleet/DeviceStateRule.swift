/// A device's state, from its progress (never from heartbeats), spelled as in the JSON.
enum DeviceState: String, Sendable, Codable, CaseIterable, Comparable {
    case healthy
    case oldShape = "old-shape"
    case behind
    case stalled
    case offline

    /// Worse states sort later: a device is as bad as its worst table.
    static func < (lhs: DeviceState, rhs: DeviceState) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// When a device counts as behind, stalled or offline (`--behind-after`, `--stalled-after`,
/// `--offline-after`), in milliseconds.
public struct FleetThresholds: Sendable, Equatable {
    public var behindAfter: Int64
    public var stalledAfter: Int64
    public var offlineAfter: Int64

    /// Seconds: 60, 120 and 24 hours by default.
    public init(behindAfterSeconds: Int64 = 60, stalledAfterSeconds: Int64 = 120, offlineAfterSeconds: Int64 = 86_400) {
        behindAfter = behindAfterSeconds * 1000
        stalledAfter = stalledAfterSeconds * 1000
        offlineAfter = offlineAfterSeconds * 1000
    }
}

/// What the table holds past a device's position, as the fleet reads it.
struct RowsWaiting: Sendable, Equatable {
    /// `updatedAt` of the oldest row the device lacks.
    var oldest: Int64
    /// How many rows it lacks, counted up to ``Fleet/lagCountLimit``.
    var count: Int
    /// `updatedAt` of the newest of them: the table's head (of the first ``Fleet/lagCountLimit``).
    var newest: Int64
}

/// The one rule from a device's progress to its state: pure, on the time it is given.
enum DeviceStateRule {
    /// One table's state and lag.
    struct TableVerdict: Sendable, Equatable {
        var state: DeviceState
        var lagSeconds: Int64
        var lagRows: Int
    }

    /// Where the rows a device lacks start: past its position when its latest pull there was
    /// answered with rows, else past its latest pull too (rows written since may not match its
    /// query, which only its next pull tells).
    static func waitingFrom(_ progress: DeviceRecord.TableProgress) -> Int64? {
        guard let position = progress.position else { return nil }
        return progress.answeredRows ? position.updatedAt : max(position.updatedAt, progress.lastPull ?? 0)
    }

    /// The state of a table whose latest row is `head` and whose rows past ``waitingFrom(_:)`` are
    /// `waiting` (nil: none).
    static func table(
        _ progress: DeviceRecord.TableProgress, waiting: RowsWaiting?, now: Int64, thresholds: FleetThresholds
    ) -> TableVerdict {
        guard progress.position != nil else { return TableVerdict(state: .healthy, lagSeconds: 0, lagRows: 0) }
        let lag = waiting.map { max(0, now - $0.oldest) / 1000 } ?? 0
        let rows = waiting?.count ?? 0
        // Stalled: the service answered its pulls with rows past its position, and it kept asking from
        // that same position for the stall time since the first such answer.
        if progress.answeredRows, let since = progress.rowsPastSince, let last = progress.lastPull,
            last - since >= thresholds.stalledAfter
        {
            return TableVerdict(state: .stalled, lagSeconds: lag, lagRows: rows)
        }
        if waiting != nil, lag * 1000 > thresholds.behindAfter {
            return TableVerdict(state: .behind, lagSeconds: lag, lagRows: rows)
        }
        return TableVerdict(state: .healthy, lagSeconds: lag, lagRows: rows)
    }

    /// The device's state: offline after no contact for the offline time, else the worst of its
    /// tables, else old-shape while it writes former column names.
    static func device(
        _ record: DeviceRecord, tables: [DeviceState], now: Int64, thresholds: FleetThresholds
    ) -> DeviceState {
        if now - record.lastContact >= thresholds.offlineAfter { return .offline }
        let worst = tables.max() ?? .healthy
        if worst == .healthy, !record.oldNames.isEmpty { return .oldShape }
        return worst
    }
}
