import SyncProtocol

/// The devices that sync (`/service/devices`): filtered by state and table, sorted by lag or by
/// latest contact, 100 a page.
struct ServiceDevicesPage: Encodable, Sendable {
    static let pageSize = 100

    var devices: [Row]
    var hasDevices: Bool
    var total: Int
    /// The states to filter by, with the devices in each, the chosen one selected.
    var states: [Choice]
    var tables: [Choice]
    var sorts: [Choice]
    var previousHref: String?
    var nextHref: String?
    var range: String

    struct Row: Encodable, Sendable {
        var id: String
        /// Its page.
        var href: String
        var state: String
        var lastContact: String
        var lastContactISO: String
        var tables: String
        var lagSeconds: Int64
        var lag: String
        var client: String
        var reported: String?
    }

    struct Choice: Encodable, Sendable {
        var value: String
        var label: String
        var selected: Bool
    }

    /// The filter of a request: `?state=&table=&sort=lag&page=N`.
    struct Filter: Sendable, Equatable {
        var state: DeviceState?
        var table: String?
        var byLag = false
        var page = 1

        /// The filter's query, for links (`page` left out on the first).
        func query(page: Int? = nil) -> String {
            var items: [String] = []
            if let state { items.append("state=\(state.rawValue)") }
            if let table { items.append("table=\(NextPageLink.encode(table))") }
            if byLag { items.append("sort=lag") }
            let page = page ?? self.page
            if page > 1 { items.append("page=\(page)") }
            return items.isEmpty ? "" : "?" + items.joined(separator: "&")
        }
    }

    /// Which of `devices` `filter` keeps, in its order.
    static func select(_ devices: [DeviceAssessment], _ filter: Filter) -> [DeviceAssessment] {
        order(devices, filter).map { devices[$0] }
    }

    /// The positions in `devices` of those `filter` keeps, in its order: positions and small keys
    /// are sorted, not the devices (10,000 of them are sorted in a few milliseconds).
    static func order(_ devices: [DeviceAssessment], _ filter: Filter) -> [Int] {
        var keys: [(lag: Int64, contact: Int64, index: Int)] = []
        keys.reserveCapacity(devices.count)
        for (index, device) in devices.enumerated()
        where (filter.state == nil || device.state == filter.state)
            && (filter.table == nil || device.record.tables[filter.table!] != nil)
        {
            keys.append((filter.byLag ? device.lagSeconds : 0, device.record.lastContact, index))
        }
        keys.sort { a, b in
            if a.lag != b.lag { return a.lag > b.lag }
            if a.contact != b.contact { return a.contact > b.contact }
            return devices[a.index].record.id > devices[b.index].record.id
        }
        return keys.map(\.index)
    }

    init(_ snapshot: FleetSnapshot, filter: Filter, base: String, now: Int64) {
        let devices = snapshot.devices
        let selected =
            filter.state == nil && filter.table == nil && !filter.byLag
            ? snapshot.byContact : Self.order(devices, filter)
        total = selected.count
        let start = min((filter.page - 1) * Self.pageSize, selected.count)
        let shown = selected[start..<min(start + Self.pageSize, selected.count)]
        self.devices = shown.map { Fleet.report(devices[$0], now: now) }.map { report in
            Row(
                id: report.id, href: "\(base)/devices/\(NextPageLink.encode(report.id))", state: report.state.rawValue,
                lastContact: Self.readable(report.lastContact), lastContactISO: report.lastContact,
                tables: report.tables.map(\.name).joined(separator: ", "),
                lagSeconds: report.lagSeconds, lag: Self.duration(report.lagSeconds),
                client: [report.client.protocol, report.client.userAgent].compactMap { $0 }.joined(separator: " · "),
                reported: report.reported.map {
                    "queue \($0.queue), oldest \(Self.duration($0.oldest)), conflicts \($0.conflicts)"
                })
        }
        hasDevices = !self.devices.isEmpty
        let counts = snapshot.counts
        states =
            [Choice(value: "", label: "All states (\(devices.count))", selected: filter.state == nil)]
            + DeviceState.allCases.map {
                Choice(value: $0.rawValue, label: "\($0.rawValue) (\(counts[$0] ?? 0))", selected: filter.state == $0)
            }
        let names = snapshot.tableNames
        tables =
            [Choice(value: "", label: "All tables", selected: filter.table == nil)]
            + names.map { Choice(value: $0, label: $0, selected: filter.table == $0) }
        sorts = [
            Choice(value: "", label: "Latest contact first", selected: !filter.byLag),
            Choice(value: "lag", label: "Most lag first", selected: filter.byLag),
        ]
        previousHref = filter.page > 1 ? "\(base)/devices\(filter.query(page: filter.page - 1))" : nil
        nextHref =
            start + Self.pageSize < selected.count ? "\(base)/devices\(filter.query(page: filter.page + 1))" : nil
        range = selected.isEmpty ? "0" : "\(start + 1)–\(start + shown.count) of \(selected.count)"
    }

    /// An ISO 8601 time as the pages show times: `2026-12-06 18:03:40 UTC`.
    static func readable(_ iso: String) -> String {
        guard iso.count >= 19 else { return iso }
        return iso.prefix(10) + " " + iso.dropFirst(11).prefix(8) + " UTC" + iso.dropFirst(24)
    }

    /// Seconds as people read them: `42 s`, `5 min`, `3 h 20 min`, `2 d 4 h`.
    static func duration(_ seconds: Int64) -> String {
        switch seconds {
        case ..<60: "\(seconds) s"
        case ..<3600: "\(seconds / 60) min"
        case ..<86_400: seconds % 3600 >= 60 ? "\(seconds / 3600) h \(seconds % 3600 / 60) min" : "\(seconds / 3600) h"
        default: "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
        }
    }
}
