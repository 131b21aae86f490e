import HTTPServer
import SyncProtocol
import Synchronization

/// Who writes to the service: per installation (`X-ZUMO-INSTALLATION-ID`), when it last wrote and
/// which former names of renamed or retired columns it still sends. Kept in memory by each
/// instance, for the service page and `/metrics`; a bounded number of installations is kept (the
/// least recent are forgotten first), so made-up ids cannot grow it without end.
final class InstallationRegistry: Sendable {
    /// One installation as the service saw it.
    struct Installation: Sendable, Equatable {
        let id: String
        /// Milliseconds since 1970 of its latest write.
        var lastWrite: Int64
        /// `table.column` for each old name its writes used, with when it last sent it.
        var oldNames: [String: Int64]

        /// Whether it still writes the old shape of a table.
        var writesOldShape: Bool { !oldNames.isEmpty }
    }

    /// The most installations kept.
    static let limit = 10_000
    private let clock: @Sendable () -> Int64
    private let installations = Mutex<[String: Installation]>([:])

    init(clock: @escaping @Sendable () -> Int64) {
        self.clock = clock
    }

    /// Notes a write of `request` to `table` that used `oldNames` (former or retired column names).
    func wrote(_ request: Request, table: String, oldNames: [String]) {
        guard let raw = request.headers[ProtocolHeader.installationID] else { return }
        let id = String(raw.prefix(64))
        guard !id.isEmpty else { return }
        let now = clock()
        installations.withLock { all in
            var installation = all[id] ?? Installation(id: id, lastWrite: now, oldNames: [:])
            installation.lastWrite = now
            for name in oldNames { installation.oldNames["\(table).\(name)"] = now }
            if all[id] == nil, all.count >= Self.limit, let oldest = all.values.min(by: { $0.lastWrite < $1.lastWrite })
            {
                all[oldest.id] = nil
            }
            all[id] = installation
        }
    }

    /// Every installation, most recent writer first.
    func all() -> [Installation] {
        installations.withLock { Array($0.values) }.sorted { ($0.lastWrite, $0.id) > ($1.lastWrite, $1.id) }
    }

    /// The installations that still write the old shape of some table.
    var behind: [Installation] { all().filter(\.writesOldShape) }
}
