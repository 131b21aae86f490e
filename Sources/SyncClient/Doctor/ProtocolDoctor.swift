import Foundation
import SyncProtocol

/// Probes a Mobile Apps (v2) or Datasync (v3) endpoint and says, check by check, whether it speaks
/// the protocol as todosync's client needs it (`todosync doctor`, the dashboard's Doctor page).
///
/// The checks run in order over the sync client's HTTP transport, with its deadlines; nothing is
/// written to any local store. Rows written to the service have ids starting with a unique prefix
/// (`doctor-<8 hex>-`) and are deleted at the end, cancelled or not. With ``Options/readOnly`` only
/// GETs are sent. An exchange that fails (unreachable, a deadline passed, cancelled) ends the run:
/// the check in progress is red with the reason, and ``DoctorReport/stopped`` says it.
public struct ProtocolDoctor: Sendable {
    /// What to probe and how patiently.
    public struct Options: Sendable, Hashable {
        /// The service's base URL (`http://host:port`).
        public var url: URL
        /// The table to probe.
        public var table: String
        /// Sent as `X-ZUMO-APPLICATION`; never shown.
        public var applicationKey: String?
        /// A signed-in user's token, sent as ``authStyle`` says; never shown.
        public var authToken: String?
        /// Runs to get the token (instead of ``authToken``), as a sync does.
        public var authTokenCommand: TokenCommand?
        /// How the token is sent; nil: as the protocol's own clients send it.
        public var authStyle: AuthStyle?
        /// Only GETs: the checks that write are not run.
        public var readOnly: Bool
        /// Which protocol to speak.
        public var protocolChoice: ProtocolChoice
        /// No byte of an answer for this long ends the run.
        public var idleTimeout: TimeInterval
        /// An exchange longer than this ends the run.
        public var requestTimeout: TimeInterval
        /// CAs trusted besides the system's (`--ca-file`).
        public var caFile: String?
        /// Sends the key in plain HTTP to another machine too (`--allow-plain-http`).
        public var allowPlainHTTP = false

        /// Options with the sync engine's deadlines shortened for a diagnosis (10 s idle, 30 s per exchange).
        public init(
            url: URL, table: String = "todoitem", applicationKey: String? = nil, readOnly: Bool = false,
            protocolChoice: ProtocolChoice = .auto, idleTimeout: TimeInterval = 10,
            requestTimeout: TimeInterval = 30
        ) {
            self.url = url
            self.table = table
            self.applicationKey = applicationKey
            self.readOnly = readOnly
            self.protocolChoice = protocolChoice
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
        }
    }

    /// The checks after ``DoctorCheck/speaks``, in the order they run.
    public static let checks: [DoctorCheck] = [
        .paging, .filter, .readOne, .timestamps, .ifMatch, .duplicate, .softDelete, .changeChannel,
    ]

    let options: Options
    /// What the deadlines read: the system's clock, or one a test moves.
    let clock: any WallClock

    /// A doctor for `options`, its deadlines on `clock`.
    public init(_ options: Options, clock: any WallClock = SystemWallClock()) {
        self.options = options
        self.clock = clock
    }

    /// Runs every check; `progress` hears each result as it comes. Never throws: a failure that ends
    /// the run is in ``DoctorReport/stopped``.
    public func run(progress: @Sendable (DoctorResult) -> Void = { _ in }) async -> DoctorReport {
        let transport = HTTPTransport(
            baseURL: options.url, applicationKey: options.applicationKey, authToken: options.authToken,
            authStyle: options.authStyle,
            tokenSupply: options.authTokenCommand.map { TokenSupply($0, clock: clock) },
            caFile: options.caFile, allowPlainHTTP: options.allowPlainHTTP,
            deadlines: ExchangeDeadlines(idle: options.idleTimeout, total: options.requestTimeout, clock: clock))
        let prefix = "doctor-" + UUID().uuidString.prefix(8).lowercased() + "-"
        var report = DoctorReport(
            url: options.url.absoluteString, table: options.table, dialect: nil, readOnly: options.readOnly,
            results: [], stop: nil, stopped: nil, cancelled: false, leftBehind: [])
        let first = DoctorSession(
            transport: transport, table: options.table, dialect: .v2, prefix: prefix, sample: nil,
            readOnly: options.readOnly)
        /// Adds a check's result to the report and tells `progress`.
        func emit(_ check: DoctorCheck, _ verdict: DoctorVerdict, _ exchanges: [RecordedExchange] = []) {
            let result = DoctorResult(name: check.name, asks: check.asks, verdict: verdict, exchanges: exchanges)
            report.results.append(result)
            progress(result)
        }
        /// A check that could not finish: the run stops there.
        func stop(_ check: DoctorCheck, _ error: SyncError) {
            emit(check, error == .stopped(.cancelled) ? .skipped("Cancelled.") : .failed(DoctorStop(error).description))
            report.stop(DoctorStop(error))
        }
        let opening: [RecordedExchange]
        do {
            opening = try await DoctorCheck.speaks.probe(first)
        } catch {
            stop(DoctorCheck.speaks, error)
            return report
        }
        let dialect = Self.dialect(for: options.protocolChoice, opening: opening)
        let verdict = DoctorCheck.speaks.judge(dialect, opening)
        emit(DoctorCheck.speaks, verdict, opening)
        guard verdict.outcome == .passed else { return report }
        report.dialect = dialect
        let index = TableProtocol.allCases.firstIndex(of: dialect) ?? 0
        let session = DoctorSession(
            transport: transport, table: options.table, dialect: dialect, prefix: prefix,
            sample: opening[index].rows(dialect)?.first, readOnly: options.readOnly)
        for check in Self.checks {
            if check.writes && options.readOnly {
                emit(check, .skipped("Not run: it writes, and this run is read-only."))
                continue
            }
            do {
                let exchanges = try await check.probe(session)
                emit(check, check.judge(dialect, exchanges), exchanges)
            } catch {
                stop(check, error)
                break
            }
        }
        // The clean-up runs in a task of its own, so that a cancelled run still removes its rows.
        if !session.createdIds.isEmpty { report.leftBehind = await Task { await session.cleanUp() }.value }
        return report
    }

    /// The protocol to speak: the one chosen, or v2 when the endpoint answers a v2 page, else v3.
    static func dialect(for choice: ProtocolChoice, opening: [RecordedExchange]) -> TableProtocol {
        switch choice {
        case .v2: return .v2
        case .v3: return .v3
        case .auto:
            if opening.first?.status == 200, opening.first?.rows(.v2) != nil { return .v2 }
            if opening.count > 1, opening[1].status == 200, opening[1].rows(.v3) != nil { return .v3 }
            return .v2
        }
    }
}
