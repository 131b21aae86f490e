import AsyncHTTPClient
import Dashboard
import Foundation
import GRDB
import NIOCore
import SyncClient
import TableService
import Views

// `dashboard-bench SMALL LARGE`: the dashboard's pages on a store of SMALL rows (the baseline,
// default 1,000) and on one of LARGE rows (default 1,000,000), each store filled through the real
// pull path from a real table service. Prints the p50 of each page at both sizes and LARGE/SMALL.
// The service's rows are written straight into its SQLite file (seeding is not what is measured).
// Build with `swift build -c release --product dashboard-bench`; see Benchmarks/dashboard-bench.sh.

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let small = arguments.first ?? 1_000
let large = arguments.dropFirst().first ?? 1_000_000
let pending = 10_000
let rounds = 15
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let resources = ResourceFolders(
    publicFolder: root.appendingPathComponent("Public"), templatesFolder: root.appendingPathComponent("Templates"))

func line(_ text: String) {
    print(text)
    fflush(nil)
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The pages timed, by label; `{deep}` is replaced by a key half-way down the list.
let pages: [(label: String, path: String)] = [
    ("/", "/"),
    ("search, many hits", "/?q=Words"),
    ("search, one hit", "/?q=unicorn"),
    ("search, no hit", "/?q=xylophone"),
    ("last page", "/?at=last"),
    ("active, deep page", "/?show=active&older={deep}"),
]

/// A table service with `rows` todos, written straight into its file.
func seededService(rows: Int, folder: String) async throws -> RunningTableService {
    let path = folder + "/service.sqlite"
    let service = try TableService.start(
        .init(database: .sqlite(path: path), tables: ["todoitem"]), port: 0, quiet: true)
    // One real insert creates the table and its columns; the rest follow its format.
    var request = HTTPClientRequest(url: service.url + "/tables/todoitem")
    request.method = .POST
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: #"{"id":"row-0000000","text":"task 0 with some words","complete":true}"#))
    _ = try await HTTPClient.shared.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20)
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
        let first = try Row.fetchOne(db, sql: #"SELECT "createdAt", "version" FROM "todoitem""#)!
        let start: Int64 = first[0]
        let statement = try db.makeStatement(
            sql: #"INSERT INTO "todoitem" ("id", "createdAt", "updatedAt", "version", "deleted", "text", "complete") "#
                + "VALUES (?, ?, ?, ?, 0, ?, ?)")
        for index in 1..<rows {
            let stamp = start + Int64(index)
            let text = index == rows / 2 ? "find the unicorn" : "task \(index) with some Words"
            try statement.execute(arguments: [
                "row-" + String(format: "%07d", index), stamp, stamp, String(stamp, radix: 36), text, index % 3 == 0,
            ])
        }
    }
    try queue.close()
    return service
}

/// The p50 of `rounds` GETs of `path`, in milliseconds (after two unmeasured ones).
func p50(_ base: String, _ path: String) async throws -> Double {
    var times: [Double] = []
    for round in 0..<(rounds + 2) {
        let start = ContinuousClock.now
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        precondition(response.status == .ok, "\(path): HTTP \(response.status) \(String(buffer: body).prefix(300))")
        if round >= 2 { times.append(seconds(since: start) * 1000) }
    }
    return times.sorted()[times.count / 2]
}

/// Fills a dashboard's store with `rows` rows by pulling them, then times every page.
func measure(rows: Int) async throws -> [String: Double] {
    let folder = NSTemporaryDirectory() + "dashboard-bench-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var start = ContinuousClock.now
    let service = try await seededService(rows: rows, folder: folder)
    line("  \(rows) rows: service seeded in \(String(format: "%.1f", seconds(since: start))) s")
    let dashboard = try await Dashboard.start(
        DashboardConfiguration(
            port: 0, dataDirectory: URL(fileURLWithPath: folder + "/dashboard"), resources: resources,
            remote: .url(URL(string: service.url)!, applicationKey: nil)))
    start = ContinuousClock.now
    let pulled = try await dashboard.context.pull(
        "todoitem", queryId: "dashboard", settings: PullSettings(pageSize: 1000))
    line(
        "  \(rows) rows: pulled \(pulled.received) in \(String(format: "%.1f", seconds(since: start))) s "
            + "(\(Int(Double(pulled.received) / seconds(since: start))) rows/s)")
    start = ContinuousClock.now
    await dashboard.context.listIndexesCaughtUp()
    line("  \(rows) rows: search index caught up \(String(format: "%.1f", seconds(since: start))) s after the pull")
    let deep =
        try dashboard.context.listPage(
            "todoitem", ListRequest(flag: .init("complete", false), limit: 1)
        ).keys.first.map { $0 / 2 } ?? 0
    var figures: [String: Double] = [:]
    for (label, path) in pages {
        figures[label] = try await p50(dashboard.url, path.replacingOccurrences(of: "{deep}", with: String(deep)))
    }
    let todos = dashboard.context.table("todoitem")
    for index in 0..<pending { try todos.insert(["text": .string("local change \(index)"), "complete": .bool(false)]) }
    figures["queue, \(pending) pending"] = try await p50(dashboard.url, "/operations")
    await dashboard.stop()
    await service.stop()
    return figures
}

line("dashboard-bench: p50 of \(rounds) requests, stores of \(small) and \(large) rows filled by pull")
let baseline = try await measure(rows: small)
let measured = try await measure(rows: large)
line(String(format: "%-24@ %10@ %10@ %8@", "page" as NSString, "\(small)" as NSString, "\(large)" as NSString, "ratio"))
var worst = 0.0
for label in pages.map(\.label) + ["queue, \(pending) pending"] {
    let ratio = measured[label]! / baseline[label]!
    worst = max(worst, ratio)
    line(
        "\(label.padding(toLength: 24, withPad: " ", startingAt: 0)) "
            + String(format: "%7.2f ms %7.2f ms %7.2f", baseline[label]!, measured[label]!, ratio))
}
line(String(format: "worst ratio %.2f (target ≤ 2)", worst))
