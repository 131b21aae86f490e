import AsyncHTTPClient
import Dashboard
import Foundation
import GRDB
import NIOCore
import SyncClient
import SyncProtocol
import TableService
import Views

// `dashboard-bench SMALL LARGE`: the dashboard's pages on a store of SMALL rows (the baseline,
// default 1,000) and on one of LARGE rows (default 1,000,000), each store filled through the real
// pull path from a real table service. Prints the p50 of each page at both sizes and LARGE/SMALL:
// the todo pages, and the `/data` pages of `orders12`, a table with 12 user columns of every type.
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

/// The pages of the 12-column table timed, by label; `{deep}` is a key half-way down the list, `{id}`
/// the row half-way, `{needle}` a text only that row has but made of trigrams nearly every row has.
let widePages: [(label: String, path: String)] = [
    ("orders12: list", "/data/orders12"),
    ("orders12: search, many hits", "/data/orders12?q=Words"),
    ("orders12: search, one hit", "/data/orders12?q={needle}"),
    ("orders12: search, no hit", "/data/orders12?q=xylophone"),
    ("orders12: last page", "/data/orders12?at=last"),
    ("orders12: unpaid, deep page", "/data/orders12?flag=paid&is=false&older={deep}"),
    ("orders12: editor", "/data/orders12/{id}"),
    ("/data", "/data"),
]

/// The 12-column table's user columns, in the order the seed writes them.
let wideColumns = [
    "customer", "note", "city", "sku", "lines", "quantity", "total", "weight", "paid", "shipped", "due", "shippedAt",
]

/// The values of row `index` of the 12-column table (`note` is "number N with some Words").
func wideValues(_ index: Int, stamp: Int64) -> [DatabaseValueConvertible] {
    let due = ProtocolDate.format(milliseconds: 1_790_000_000_000 + Int64(index) * 60_000)
    let customer: String = "customer \(index % 997)"
    let note: String = "number \(index) with some Words"
    let values: [DatabaseValueConvertible] = [
        customer, note, "city \(index % 31)", "SKU-\(index % 5000)", index % 9 + 1, index % 40,
        Double(index % 10_000) / 4 + 0.5, Double(index % 300) / 8 + 0.25, index % 2 == 0, index % 3 == 0, due, due,
    ]
    return values
}

/// Adds the 12-column table `orders12` with `rows` rows to the service's file at `path` (one real
/// insert creates the table and its columns; the rest are written straight into the file).
func seedWideTable(rows: Int, service: RunningTableService, path: String) async throws {
    var request = HTTPClientRequest(url: service.url + "/tables/orders12")
    request.method = .POST
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    request.headers.add(name: "Content-Type", value: "application/json")
    let first = zip(wideColumns, wideValues(0, stamp: 0)).map { name, value -> String in
        let json: String =
            switch value.databaseValue.storage {
            case .string(let text): "\"\(text)\""
            case .int64(let number):
                name == "paid" || name == "shipped" ? (number != 0 ? "true" : "false") : "\(number)"
            case .double(let number): "\(number)"
            default: "null"
            }
        return "\"\(name)\":\(json)"
    }
    request.body = .bytes(ByteBuffer(string: #"{"id":"o-0000000","# + first.joined(separator: ",") + "}"))
    _ = try await HTTPClient.shared.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20)
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
        let first = try Row.fetchOne(db, sql: #"SELECT "createdAt" FROM "orders12""#)!
        let start: Int64 = first[0]
        let columns = wideColumns.map { "\"\($0)\"" }.joined(separator: ", ")
        let statement = try db.makeStatement(
            sql: #"INSERT INTO "orders12" ("id", "createdAt", "updatedAt", "version", "deleted", "#
                + columns + ") VALUES (?, ?, ?, ?, 0, "
                + Array(repeating: "?", count: wideColumns.count)
                .joined(separator: ", ") + ")")
        for index in 1..<rows {
            let stamp = start + Int64(index)
            let system: [DatabaseValueConvertible] = [
                "o-" + String(format: "%07d", index), stamp, stamp, String(stamp, radix: 36),
            ]
            try statement.execute(arguments: StatementArguments(system + wideValues(index, stamp: stamp)))
        }
    }
    try queue.close()
}

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
    try await seedWideTable(rows: rows, service: service, path: folder + "/service.sqlite")
    line("  \(rows) rows: service seeded in \(String(format: "%.1f", seconds(since: start))) s")
    let dashboard = try await Dashboard.start(
        DashboardConfiguration(
            port: 0, dataDirectory: URL(fileURLWithPath: folder + "/dashboard"), resources: resources,
            remote: .url(URL(string: service.url)!, applicationKey: nil), tables: ["todoitem", "orders12"]))
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
    start = ContinuousClock.now
    let wide = try await dashboard.context.pull(
        "orders12", queryId: "dashboard", settings: PullSettings(pageSize: 1000))
    line(
        "  \(rows) rows: pulled \(wide.received) of orders12 (12 columns) in "
            + "\(String(format: "%.1f", seconds(since: start))) s")
    await dashboard.context.listIndexesCaughtUp()
    let wideDeep =
        try dashboard.context.listPage("orders12", ListRequest(flag: .init("paid", false), limit: 1)).keys.first
        .map { $0 / 2 } ?? 0
    let middle = rows / 2
    for (label, path) in widePages {
        let concrete =
            path.replacingOccurrences(of: "{deep}", with: String(wideDeep))
            .replacingOccurrences(of: "{id}", with: "o-" + String(format: "%07d", middle))
            .replacingOccurrences(of: "{needle}", with: "number+\(middle)+with")
        figures[label] = try await p50(dashboard.url, concrete)
    }
    let todos = dashboard.context.table("todoitem")
    for index in 0..<pending {
        try await todos.insert(["text": .string("local change \(index)"), "complete": .bool(false)])
    }
    figures["queue, \(pending) pending"] = try await p50(dashboard.url, "/operations")
    figures["/data, \(pending) pending"] = try await p50(dashboard.url, "/data")
    await dashboard.stop()
    await service.stop()
    return figures
}

line("dashboard-bench: p50 of \(rounds) requests, stores of \(small) and \(large) rows filled by pull")
let baseline = try await measure(rows: small)
let measured = try await measure(rows: large)
line(String(format: "%-30@ %10@ %10@ %8@", "page" as NSString, "\(small)" as NSString, "\(large)" as NSString, "ratio"))
var worst = 0.0
for label in pages.map(\.label) + ["queue, \(pending) pending"] + widePages.map(\.label)
    + ["/data, \(pending) pending"]
{
    let ratio = measured[label]! / baseline[label]!
    worst = max(worst, ratio)
    line(
        "\(label.padding(toLength: 30, withPad: " ", startingAt: 0)) "
            + String(format: "%7.2f ms %7.2f ms %7.2f", baseline[label]!, measured[label]!, ratio))
}
line(String(format: "worst ratio %.2f (target ≤ 2)", worst))
