/// What the service learned of one device from its requests: kept in memory, saved as JSON in
/// `__devices`, and merged with what other instances saved (see ``merge(_:)``).
struct DeviceRecord: Sendable, Equatable, Codable {
    /// Its `X-ZUMO-INSTALLATION-ID`.
    let id: String
    /// Milliseconds since 1970 of its latest request.
    var lastContact: Int64
    /// Its `User-Agent`, cut to 200 characters.
    var userAgent: String?
    /// The protocol of its latest request: `v2`, `v3` or `2015`.
    var protocolName: String?
    /// The user of its latest signed-in request.
    var user: String?
    /// `table.column` for each former column name its writes used, with when it last sent it.
    var oldNames: [String: Int64] = [:]
    var tables: [String: TableProgress] = [:]
    /// Its latest errors, newest last, at most ``errorLimit``.
    var errors: [ServiceAnswer] = []
    /// What it said of itself (a todosync client), with when.
    var reported: ClientState?
    var reportedAt: Int64?
    /// Its lag (the worst of its tables, in seconds) sampled once per ``lagSampleInterval``, the
    /// last 24 hours.
    var lag: [LagSample] = []
    /// When an admin asked for its support bundle, and when the bundle arrived.
    var bundleRequestedAt: Int64?
    var bundleReceivedAt: Int64?

    static let errorLimit = 10
    static let lagSampleInterval: Int64 = 600_000
    static let lagHistory: Int64 = 86_400_000

    init(id: String, lastContact: Int64) {
        self.id = id
        self.lastContact = lastContact
    }

    /// One table as a device pulls and pushes it.
    struct TableProgress: Sendable, Equatable, Codable {
        /// Where its latest incremental pull asked from.
        var position: PullPosition?
        /// When ``position`` last moved.
        var positionSince: Int64?
        var lastPull: Int64?
        /// Whether its latest pull from ``position`` was answered with rows: there was something
        /// past the position for its query.
        var answeredRows: Bool = false
        /// When the service first answered a pull from ``position`` with rows past it: the time a
        /// stall is counted from (a device at the head of a quiet table has had its position long).
        var rowsPastSince: Int64?
        var lastPush: Int64?
        var lastPushStatus: Int?

        /// Notes a pull from `position` at `now`, answered with `rows` rows past it (nil: it failed,
        /// which leaves what the last answer from there said).
        mutating func pulled(from position: PullPosition, at now: Int64, rows: Int?) {
            if self.position != position {
                self.position = position
                positionSince = now
                answeredRows = false
                rowsPastSince = nil
            }
            lastPull = now
            guard let rows else { return }
            answeredRows = rows > 0
            rowsPastSince = rows > 0 ? (rowsPastSince ?? now) : nil
        }

        /// The later of two instances' views of one table.
        func merged(_ other: TableProgress) -> TableProgress {
            var result = (other.lastPull ?? 0) > (lastPull ?? 0) ? other : self
            // The same position seen by both: it has not moved since the earlier of the two saw it.
            if position == other.position, let a = positionSince, let b = other.positionSince {
                result.positionSince = min(a, b)
                if let a = rowsPastSince, let b = other.rowsPastSince { result.rowsPastSince = min(a, b) }
            }
            if (other.lastPush ?? 0) > (lastPush ?? 0) {
                result.lastPush = other.lastPush
                result.lastPushStatus = other.lastPushStatus
            } else {
                result.lastPush = lastPush
                result.lastPushStatus = lastPushStatus
            }
            return result
        }
    }

    /// An answer of the service that refused a request.
    struct ServiceAnswer: Sendable, Equatable, Codable {
        var at: Int64
        var method: String
        var path: String
        var status: Int
        var message: String
    }

    struct LagSample: Sendable, Equatable, Codable {
        var at: Int64
        var seconds: Int64
    }

    /// Notes an error answer.
    mutating func failed(_ answer: ServiceAnswer) {
        errors.append(answer)
        if errors.count > Self.errorLimit { errors.removeFirst(errors.count - Self.errorLimit) }
    }

    /// Adds a lag sample at `now` unless the latest is younger than ``lagSampleInterval``, and
    /// forgets those older than ``lagHistory``.
    mutating func sampleLag(_ seconds: Int64, at now: Int64) {
        if let last = lag.last, now - last.at < Self.lagSampleInterval {
            // Within one interval, the worst lag seen stands for it.
            lag[lag.count - 1].seconds = max(last.seconds, seconds)
        } else {
            lag.append(LagSample(at: now, seconds: seconds))
        }
        lag.removeAll { now - $0.at > Self.lagHistory }
    }

    /// `other` (another instance's or an older save of the same device) folded in: the later of
    /// each fact.
    mutating func merge(_ other: DeviceRecord) {
        if other.lastContact > lastContact {
            lastContact = other.lastContact
            userAgent = other.userAgent ?? userAgent
            protocolName = other.protocolName ?? protocolName
            user = other.user ?? user
        }
        oldNames.merge(other.oldNames, uniquingKeysWith: max)
        tables.merge(other.tables) { mine, theirs in mine.merged(theirs) }
        var seen = Set<ServiceAnswer>()
        errors = (errors + other.errors).sorted { $0.at < $1.at }.filter { seen.insert($0).inserted }.suffix(
            Self.errorLimit
        ).map { $0 }
        if (other.reportedAt ?? 0) > (reportedAt ?? 0) {
            reported = other.reported
            reportedAt = other.reportedAt
        }
        var samples: [Int64: Int64] = [:]
        for sample in lag + other.lag { samples[sample.at] = max(samples[sample.at] ?? 0, sample.seconds) }
        lag = samples.map { LagSample(at: $0.key, seconds: $0.value) }.sorted { $0.at < $1.at }
        bundleRequestedAt = [bundleRequestedAt, other.bundleRequestedAt].compactMap { $0 }.max()
        bundleReceivedAt = [bundleReceivedAt, other.bundleReceivedAt].compactMap { $0 }.max()
    }

    /// Whether a bundle was asked for and has not arrived since.
    var bundlePending: Bool {
        guard let asked = bundleRequestedAt else { return false }
        return (bundleReceivedAt ?? 0) < asked
    }
}

extension DeviceRecord.ServiceAnswer: Hashable {}
