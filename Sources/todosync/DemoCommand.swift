import ArgumentParser
import Dashboard
import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TableService

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `todosync demo`: the tutorial's two phones — one table service and two dashboards.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start one table service and two dashboards (device A and B) to try a conflict.",
        discussion: """
            Device A listens on --port, device B on --port + 1 and the service on --port + 2 (--port 0: \
            each on a free port the system picks; the addresses are printed once all three listen). Edit \
            the same todo differently on A and B, sync A, then sync B: B shows the conflict.
            """
    )

    @Option(help: "Port of device A; B and the service use the next two (0: a free port each, printed at start).")
    var port = 8080

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Folder for the demo's stores (its content is kept between runs).")
    var dataDir = "data/demo"

    @Flag(help: "Start from empty stores and the seeded todos.")
    var fresh = false

    @Flag(
        help: """
            Two signed-in users: the service keeps each user's todos apart, device A is signed in as alice \
            and device B as bob (tokens signed with a secret made for this run).
            """)
    var twoUsers = false

    @Option(
        help: ArgumentHelp(
            "Each device syncs by itself every this many seconds (5 to 86400), and a few seconds after each "
                + "change; 0 turns it off.",
            valueName: "seconds"))
    var autoSync = 30

    @Option(
        help: ArgumentHelp(
            "auto (the default) makes each device follow the service's change channel: an edit on one shows on "
                + "the other within a second; off polls every --auto-sync seconds.",
            valueName: "auto|on|off"))
    var live: LiveMode = .auto

    @OptionGroup var allowedHosts: AllowedHostOptions
    @OptionGroup var resources: ResourceOptions

    /// The todos a new demo service starts with.
    static let seeds = ["Buy milk", "Call the dentist", "Water the plants", "Book train tickets"]

    /// The second table a new demo service starts with, beside the todos: any table syncs, with
    /// every column (see `/data` on each device).
    static let orders: [Item] = [
        [
            "id": "order-1", "customer": "ACME", "total": 12.5, "paid": false, "due": "2026-12-01T09:30:00.000Z",
            "lines": 3,
        ],
        [
            "id": "order-2", "customer": "Bolt & Co", "total": 99.0, "paid": true, "due": "2026-11-20T00:00:00.000Z",
            "lines": 1,
        ],
        [
            "id": "order-3", "customer": "Corvid Ltd", "total": 7.25, "paid": false, "due": "2027-01-15T12:00:00.000Z",
            "lines": 2,
        ],
    ]

    /// The tables the demo's service and devices sync.
    static let tables = ["todoitem", "orders"]

    func validate() throws {
        guard (0...65533).contains(port) else {
            throw ValidationError("--port must be between 1 and 65533, or 0 for free ports of the system's choosing.")
        }
        try AutoSyncOption.check(autoSync)
    }

    func run() async throws {
        let signals = await trapTerminationSignals()
        let folder = URL(fileURLWithPath: dataDir)
        if fresh { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let folders = try resources.locate()
        let signIn = twoUsers ? SignIn(secret: CSRFProtection.randomToken(), perUserTables: ["todoitem"]) : nil
        var tokens: [String?] = [nil, nil]
        if let signIn {
            tokens = [
                try await TokenIssuer.token(for: "alice", signIn: signIn),
                try await TokenIssuer.token(for: "bob", signIn: signIn),
            ]
        }
        let service: RunningTableService
        do {
            service = try TableService.start(
                .init(
                    database: .sqlite(path: folder.appendingPathComponent("service.sqlite").path), tables: Self.tables,
                    templatesFolder: folders.templatesFolder, signIn: signIn),
                host: host, port: listeningPort(2), quiet: true, allowedHosts: allowedHosts.names)
        } catch {
            throw ValidationError("\(error) (the demo uses ports \(port) to \(port + 2); see --port, or --port 0)")
        }
        try await seed(
            service.url, table: "todoitem", token: tokens[0],
            Self.seeds.map { ["text": .string($0), "complete": false] })
        try await seed(service.url, table: "orders", token: tokens[0], Self.orders)
        let remote = URL(string: service.url)!
        var devices: [Dashboard] = []
        for (index, name) in ["Device A", "Device B"].enumerated() {
            var configuration = DashboardConfiguration(
                host: host, port: listeningPort(index),
                dataDirectory: folder.appendingPathComponent(index == 0 ? "device-a" : "device-b"), resources: folders,
                remote: .url(remote, applicationKey: nil),
                deviceName: twoUsers ? "\(name) (\(index == 0 ? "alice" : "bob"))" : name,
                servicePageURL: twoUsers ? nil : service.url + "/service/tables/todoitem",
                allowedHosts: allowedHosts.names, authToken: tokens[index] ?? "", tables: Self.tables)
            configuration.autoSyncInterval = Double(autoSync)
            configuration.live = live
            devices.append(try await configuration.launchFromCommandLine())
        }
        announce(
            """
            todosync demo:
              device A   \(devices[0].signInLink ?? devices[0].url + "/")
              device B   \(devices[1].signInLink ?? devices[1].url + "/")
              service    \(service.url)/\(twoUsers ? "tables/todoitem  (signed-in users only)" : "service  (the table service's own page)")
            \(twoUsers
                ? "Device A is signed in as alice, B as bob: each syncs only their own todos."
                : "Edit the same todo differently on A and B, sync A, then sync B: B shows the conflict.")
            \(autoSync == 0
                ? "Auto-sync is off: press Sync."
                : live == .off
                    ? "Each device also syncs by itself every \(autoSync) s and a few seconds after an edit (--auto-sync 0 turns it off)."
                    : "Both devices are live: an edit on one shows on the other's open page within a second (--live off polls instead; --auto-sync 0 turns syncing by itself off).")
            Ctrl-C stops the demo.
            """)
        // The devices stop first, then the service they sync with.
        try await runUntilTerminated([service] + devices, signals: signals)
        announce("todosync demo stopped.")
    }

    /// The port of device A (0), device B (1) or the service (2): `--port` and the next two, or 0
    /// for each (the system picks a free one, with no window for another program to take it).
    private func listeningPort(_ offset: Int) -> Int {
        port == 0 ? 0 : port + offset
    }

    /// Inserts the seed rows of `table` through the protocol when the service has none.
    private func seed(_ base: String, table: String, token: String?, _ rows: [Item]) async throws {
        let list = URL(string: base + "/tables/\(table)?$top=1")!
        var request = URLRequest(url: list)
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        request.setValue(token, forHTTPHeaderField: "X-ZUMO-AUTH")
        let (data, _) = try await URLSession.shared.data(for: request)
        guard (try? JSONSerialization.jsonObject(with: data) as? [Any])?.isEmpty ?? false else { return }
        for row in rows {
            var insert = URLRequest(url: URL(string: base + "/tables/\(table)")!)
            insert.httpMethod = "POST"
            insert.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
            insert.setValue("application/json", forHTTPHeaderField: "Content-Type")
            insert.setValue(token, forHTTPHeaderField: "X-ZUMO-AUTH")
            insert.httpBody = Data(JSONValue.object(row).jsonText.utf8)
            _ = try await URLSession.shared.data(for: insert)
        }
    }
}
