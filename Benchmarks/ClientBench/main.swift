import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import Storage
import SyncClient
import SyncProtocol
import TableService

// `client-bench [ROWS] [PUSHES]`: the sync client's pull and push against the real table service
// (in-process, loopback), with the floors measured in the same run:
//   a. pull ROWS rows (default 100k) into an empty store, page size 1000, three times, alternating
//      with its floors; then the same for ROWS rows of a table with 12 user columns (`WidePull`);
//   b. push PUSHES queued inserts (default 10k), in ten rounds alternating with their floor;
//   c. floors: the same pages fetched with plain sequential GETs (bytes only), the same rows inserted
//      with one prepared statement (one transaction per page), and the same insert bodies POSTed
//      with plain sequential requests. Plain requests go through async-http-client, as the sync
//      client's own do.
// Build with `swift build -c release --product client-bench`; see Benchmarks/client-bench.sh.

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rowCount = arguments.first ?? 100_000
let pushCount = arguments.dropFirst().first ?? 10_000
let pageSize = 1000

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return seconds(since: start)
}

func line(_ text: String) {
    print(text)
    fflush(nil)
}

let work = NSTemporaryDirectory() + "client-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

let service = try TableService.start(
    .init(database: .sqlite(path: work + "/service.sqlite"), tables: ["todoitem", "floor"]), port: 0, quiet: true)
let base = service.url

// `ONLY=tls`: only the pull and push over HTTPS against plain HTTP (section e).
if ProcessInfo.processInfo.environment["ONLY"] == "tls" {
    line("seeding \(rowCount) rows…")
    try await seedTodos(rowCount, base: base)
    await service.stop()
    for text in try await TLSRounds.run(
        database: work + "/service.sqlite", rows: rowCount, pushes: pushCount, work: work)
    {
        line(text)
    }
    exit(0)
}

// `ONLY=wide`: only the 12-column pull and its floors (to profile it, e.g. under `perf record -g`).
if ProcessInfo.processInfo.environment["ONLY"] == "wide" {
    line("seeding \(rowCount) rows of a 12-column table…")
    let wide = try await WidePull.run(base: base, rows: rowCount, pageSize: pageSize, rounds: 3, work: work)
    wide.report(rows: rowCount, rounds: 3).forEach(line)
    await service.stop()
    exit(0)
}
/// One plain request; the answer's body.
@discardableResult
func plainRequest(_ method: String, _ path: String, body: Data? = nil) async throws -> ByteBuffer {
    var request = HTTPClientRequest(url: base + path)
    request.method = .init(rawValue: method)
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    if let body {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
    }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    return try await response.body.collect(upTo: 64 << 20)
}

func body(_ index: Int, prefix: String) -> Data {
    Data(
        #"{"id":"\#(prefix)-\#(String(format: "%07d", index))","text":"task number \#(index) with some words","complete":\#(index % 3 == 0)}"#
            .utf8)
}

// Seed the server (not measured): eight requests at a time.
line("seeding \(rowCount) rows into the table service…")
try await withThrowingTaskGroup(of: Void.self) { group in
    for worker in 0..<8 {
        group.addTask {
            for index in stride(from: worker, to: rowCount, by: 8) {
                try await plainRequest("POST", "/tables/todoitem", body: body(index, prefix: "row"))
            }
        }
    }
    try await group.waitForAll()
}

// `ONLY=verify`: only the pull with its verify (three rounds) and the restore's reconcile, the
// ratios as in the whole run (to profile them, e.g. under `perf record -g`).
if ProcessInfo.processInfo.environment["ONLY"] == "verify" {
    var (pullTime, verifyTime) = (0.0, 0.0)
    for round in 0..<3 {
        let context = try SyncContext(
            path: work + "/verify-\(round).sqlite", configuration: .init(remoteURL: URL(string: base)!))
        pullTime += try await seconds {
            _ = try await context.table("todoitem").pull(queryId: "bench", settings: PullSettings(pageSize: pageSize))
        }
        await context.listIndexesCaughtUp()
        verifyTime += try await seconds {
            let report = try await context.verify("todoitem")
            precondition(report.differences.isEmpty, "verify found \(report.differences.count) differences")
        }
    }
    line(
        String(
            format: "verify %d rows (after each of 3 pulls): %.2f s; the pulls: %.2f s;  verify / pull = %.2f",
            rowCount, verifyTime, pullTime, verifyTime / pullTime))
    try await RestoreReconcile.run(rows: rowCount, pageSize: pageSize, work: work).forEach(line)
    await service.stop()
    exit(0)
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func encode(_ text: String) -> String {
    text.addingPercentEncoding(
        withAllowedCharacters: CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~$")) ?? text
}

/// What the floors need from a pulled store: the paths of the same pages (same keyset filters) and
/// the same rows as SQLite values.
func floorInputs(_ context: SyncContext) throws -> (pagePaths: [String], rows: [[DatabaseValue]]) {
    let ordered = try context.table("todoitem").query(TableQuery(orderBy: [.ascending("updatedAt"), .ascending("id")]))
    var pagePaths: [String] = []
    var cursor: Item?
    for start in stride(from: 0, through: ordered.count, by: pageSize) {
        var query = "$orderby=updatedAt%2Cid&$top=\(pageSize)&__includeDeleted=true"
        if let cursor, let time = cursor["updatedAt"]?.stringValue, let id = cursor["id"]?.stringValue {
            let filter =
                "((updatedAt gt datetimeoffset'\(time)') or (updatedAt eq datetimeoffset'\(time)' and id gt '\(id)'))"
            query = "$filter=" + encode(filter) + "&" + query
        }
        pagePaths.append("/tables/todoitem?" + query)
        if start + pageSize - 1 < ordered.count { cursor = ordered[start + pageSize - 1] }
    }
    let rows: [[DatabaseValue]] = ordered.map { item in
        floorColumns.map { name in
            switch item[name] {
            case .string(let text)?: text.databaseValue
            case .bool(let flag)?: (flag ? 1 : 0).databaseValue
            case .number(let number)?: number.databaseValue
            default: .null
            }
        }
    }
    return (pagePaths, rows)
}
let floorColumns = ["id", "version", "createdAt", "updatedAt", "deleted", "text", "complete"]

// a. Pull into an empty store, and c1/c2. its floors: the same pages fetched with plain sequential
// GETs (bytes only), and the same rows inserted with one prepared statement, one transaction per
// page, into a fresh file. In three rounds that alternate which goes first (the first round pulls
// first: its rows give the floors their pages), so that both share the machine's drift. The search
// index catches up in the background after each pull: timed on its own, and awaited before anything
// else runs.
let pullRounds = 3
var pullTime = 0.0
var indexTime = 0.0
var fetchTime = 0.0
var insertTime = 0.0
var pagePaths: [String] = []
var rows: [[DatabaseValue]] = []
var fetchedBytes = 0
var pullV3Time = 0.0
var verifyTime = 0.0
for round in 0..<pullRounds {
    // 0: the pull (v2), 1: its floors, 2: the same pull over Datasync v3.
    for pass in round % 2 == 0 ? [0, 1, 2] : [2, 1, 0] {
        if pass == 2 {
            let context = try SyncContext(
                path: work + "/pull-v3-\(round).sqlite",
                configuration: .init(remoteURL: URL(string: base)!, tableProtocol: .v3))
            let start = ContinuousClock.now
            let pulled = try await context.table("todoitem").pull(
                queryId: "bench", settings: PullSettings(pageSize: pageSize))
            pullV3Time += seconds(since: start)
            precondition(pulled.received == rowCount, "pulled \(pulled.received) of \(rowCount) over v3")
            await context.listIndexesCaughtUp()
        } else if pass == 0 {
            let context = try SyncContext(
                path: work + "/pull-\(round).sqlite", configuration: .init(remoteURL: URL(string: base)!))
            var start = ContinuousClock.now
            let pulled = try await context.table("todoitem").pull(
                queryId: "bench", settings: PullSettings(pageSize: pageSize))
            pullTime += seconds(since: start)
            precondition(pulled.received == rowCount, "pulled \(pulled.received) of \(rowCount)")
            start = .now
            await context.listIndexesCaughtUp()
            indexTime += seconds(since: start)
            if pagePaths.isEmpty { (pagePaths, rows) = try floorInputs(context) }
            // Verify of the copy just pulled: every row read again from the service and compared.
            start = .now
            let report = try await context.verify("todoitem")
            verifyTime += seconds(since: start)
            precondition(report.differences.isEmpty, "verify found \(report.differences.count) differences")
        } else {
            var start = ContinuousClock.now
            fetchedBytes = 0
            for path in pagePaths { fetchedBytes += try await plainRequest("GET", path).readableBytes }
            fetchTime += seconds(since: start)
            let floorDatabase = try StoreDatabase.open(
                at: work + "/floor-\(round).sqlite",
                migrations: [
                    StoreMigration("table") { db in
                        try db.execute(
                            sql: """
                                CREATE TABLE todoitem (id TEXT PRIMARY KEY NOT NULL, version TEXT, createdAt TEXT,
                                    updatedAt TEXT, deleted INTEGER, text TEXT, complete INTEGER);
                                CREATE INDEX todoitem_updatedAt ON todoitem (updatedAt, id);
                                """)
                    }
                ], durability: .everyCommit)
            start = .now
            for first in stride(from: 0, to: rows.count, by: pageSize) {
                try floorDatabase.write { db in
                    let insert = try BulkInserter(db, table: "todoitem", columns: floorColumns, onConflict: .replace)
                    for row in rows[first..<min(first + pageSize, rows.count)] { try insert.insert(row) }
                }
            }
            insertTime += seconds(since: start)
        }
    }
}
let pulledRows = rowCount * pullRounds

// a2. The same pull of a table with 12 user columns of every type, against its own floors.
line("seeding \(rowCount) rows of a 12-column table…")
let wide = try await WidePull.run(base: base, rows: rowCount, pageSize: pageSize, rounds: pullRounds, work: work)

// b. Push queued inserts with the default window and with a window of 1 (strictly in queue order),
// and c3. their floor: the same bodies POSTed with plain sequential requests (to another table). In
// ten rounds that alternate which goes first, so that all share the machine's drift and the
// service's growing tables (queueing is timed on its own).
func queueInserts(_ context: SyncContext, _ indices: Range<Int>, prefix: String) async throws {
    for index in indices {
        try await context.table("todoitem").insert([
            "id": .string("\(prefix)-\(index)"), "text": .string("task number \(index) with some words"),
            "complete": .bool(index % 3 == 0),
        ])
    }
}

func timedPush(_ context: SyncContext, expecting count: Int) async throws -> Double {
    try await seconds {
        let pushed = try await context.push()
        precondition(pushed.pushed.count == count, "pushed \(pushed.pushed.count) of \(count)")
    }
}

let window = SyncConfiguration.defaultPushWindow
let pushContext = try SyncContext(path: work + "/push.sqlite", configuration: .init(remoteURL: URL(string: base)!))
let orderedContext = try SyncContext(
    path: work + "/push1.sqlite", configuration: .init(remoteURL: URL(string: base)!, pushWindow: 1))
let pushV3Context = try SyncContext(
    path: work + "/push-v3.sqlite", configuration: .init(remoteURL: URL(string: base)!, tableProtocol: .v3))
var pushV3Time = 0.0
var queueTime = 0.0
var pushTime = 0.0
var orderedTime = 0.0
var postTime = 0.0
let rounds = min(10, pushCount)
for round in 0..<rounds {
    let indices = (pushCount * round / rounds)..<(pushCount * (round + 1) / rounds)
    queueTime += try await seconds { try await queueInserts(pushContext, indices, prefix: "push") }
    try await queueInserts(orderedContext, indices, prefix: "push1")
    try await queueInserts(pushV3Context, indices, prefix: "push3")
    let order = [0, 1, 2, 3].map { ($0 + round) % 4 }
    for step in order {
        switch step {
        case 0: pushTime += try await timedPush(pushContext, expecting: indices.count)
        case 1: orderedTime += try await timedPush(orderedContext, expecting: indices.count)
        case 3: pushV3Time += try await timedPush(pushV3Context, expecting: indices.count)
        default:
            postTime += try await seconds {
                for index in indices {
                    try await plainRequest("POST", "/tables/floor", body: body(index, prefix: "floor"))
                }
            }
        }
    }
}

// b2. The same inserts queued in one transaction (`client add --stdin`, several rows in one call):
// one sync of the disk for all of them.
let batchContext = try SyncContext(path: work + "/batch.sqlite", configuration: .init(remoteURL: URL(string: base)!))
let batchTime = try await seconds {
    try await batchContext.table("todoitem").insert(
        (0..<pushCount).map { index in
            ["id": .string("batch-\(index)"), "text": .string("task number \(index) with some words")]
        })
}

/// `todosync proxy` in front of the service with these `--fault` rules; its address.
func startProxy(_ faults: [String], seed: Int = 1) throws -> (process: Process, url: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("todosync")
    process.arguments =
        ["proxy", "--listen", "0", "--to", base, "--quiet", "--seed", String(seed)]
        + faults.flatMap { ["--fault", $0] }
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    // Its first line: "todosync proxy: http://127.0.0.1:PORT → …".
    var announced = Data()
    while !announced.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        precondition(!chunk.isEmpty, "todosync proxy ended before it said where it listens")
        announced += chunk
    }
    return (process, String(String(decoding: announced, as: UTF8.self).split(separator: " ")[2]))
}

// d. A slow link: `todosync proxy --fault delay=25` (25 ms before each request goes on) in front of
// the service. SLOW_PUSHES inserts (default 2,000) pushed with the default window and with a window
// of 1, against the same POSTs sent one after another through the same proxy.
let slowCount = ProcessInfo.processInfo.environment["SLOW_PUSHES"].flatMap { Int($0) } ?? 2000
let (proxyProcess, slowBase) = try startProxy(["delay=25"])
defer { proxyProcess.terminate() }
let slowContext = try SyncContext(
    path: work + "/slow.sqlite", configuration: .init(remoteURL: URL(string: String(slowBase))!))
let slowOrderedContext = try SyncContext(
    path: work + "/slow1.sqlite", configuration: .init(remoteURL: URL(string: String(slowBase))!, pushWindow: 1))
try await queueInserts(slowContext, 0..<slowCount, prefix: "slow")
try await queueInserts(slowOrderedContext, 0..<slowCount, prefix: "slow1")
let slowTime = try await timedPush(slowContext, expecting: slowCount)
let slowOrderedTime = try await timedPush(slowOrderedContext, expecting: slowCount)
var slowPostTime = 0.0
do {
    var request = HTTPClientRequest(url: String(slowBase) + "/tables/floor")
    request.method = .POST
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    request.headers.add(name: "Content-Type", value: "application/json")
    slowPostTime = try await seconds {
        for index in 0..<slowCount {
            request.body = .bytes(ByteBuffer(bytes: body(index, prefix: "slowfloor")))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    }
}

// e. A lossy link: the same slow link, where a share of the POSTs reach the service and lose their
// answer (`drop`). 120 inserts through 20 % drops, pushed until none is queued (at most 3 pushes);
// SLOW_PUSHES inserts through 2 % drops, against the lossless window above.
func rowsOnService(prefix: String) async throws -> Int {
    let page = try await plainRequest(
        "GET", "/tables/todoitem?$filter=startswith(id,%27\(prefix)%27)&$top=0&$inlinecount=allpages")
    let object = try JSONSerialization.jsonObject(with: Data(page.readableBytesView)) as? [String: Any]
    return object?["count"] as? Int ?? -1
}
let (lossyProcess, lossyBase) = try startProxy(["drop,method=POST,p=0.2", "delay=25"], seed: 34)
let lossyContext = try SyncContext(
    path: work + "/lossy.sqlite", configuration: .init(remoteURL: URL(string: lossyBase)!))
try await lossyContext.table("todoitem").insert(
    (0..<120).map { ["id": .string("lossy20-\($0)"), "text": .string("lossy \($0)")] })
var lossyPushes = 0
while try !lossyContext.operations.all().isEmpty, lossyPushes < 10 {
    lossyPushes += 1
    _ = try? await lossyContext.push()
}
let lossyArrived = try await rowsOnService(prefix: "lossy20-")
lossyProcess.terminate()
let (dropsProcess, dropsBase) = try startProxy(["drop,method=POST,p=0.02", "delay=25"], seed: 2)
let dropsContext = try SyncContext(
    path: work + "/drops.sqlite", configuration: .init(remoteURL: URL(string: dropsBase)!))
try await queueInserts(dropsContext, 0..<slowCount, prefix: "drops2")
var dropsPushes = 0
let dropsTime = try await seconds {
    while try !dropsContext.operations.all().isEmpty, dropsPushes < 10 {
        dropsPushes += 1
        _ = try? await dropsContext.push()
    }
}
let dropsArrived = try await rowsOnService(prefix: "drops2-")
dropsProcess.terminate()

await service.stop()

func rate(_ count: Int, _ time: Double) -> String { String(format: "%.0f", Double(count) / time) }
func ratio(_ value: Double) -> String { String(format: "%.2f", value) }
line("")
line(
    "pull  \(rowCount) rows in \(pagePaths.count - 1) pages of \(pageSize), \(pullRounds) times: \(ratio(pullTime)) s, "
        + "\(rate(pulledRows, pullTime)) rows/s")
line(
    "  floor fetch  (same pages, plain GETs, \(fetchedBytes / 1_000_000) MB each time): \(ratio(fetchTime)) s, "
        + "\(rate(pulledRows, fetchTime)) rows/s")
line("  floor insert (same rows, prepared statement): \(ratio(insertTime)) s, \(rate(pulledRows, insertTime)) rows/s")
line(
    "  pull / (fetch + insert) = \(ratio(pullTime / (fetchTime + insertTime)))   [target ≤ 1.5; pull target ≥ 50000 rows/s]"
)
line(
    "  then the search index caught up in the background: \(ratio(indexTime)) s more; "
        + "(pull + index) / (fetch + insert) = \(ratio((pullTime + indexTime) / (fetchTime + insertTime)))")
line(
    "  the same pull over Datasync v3: \(ratio(pullV3Time)) s, \(rate(pulledRows, pullV3Time)) rows/s;  "
        + "v3 / v2 = \(ratio(pullV3Time / pullTime))   [target ≤ 1.1]")
line(
    "verify \(rowCount) rows against the service (after each pull): \(ratio(verifyTime)) s, "
        + "\(rate(pulledRows, verifyTime)) rows/s;  verify / pull = \(ratio(verifyTime / pullTime))   [target ≤ 2]")
wide.report(rows: rowCount, rounds: pullRounds).forEach(line)
try await RestoreReconcile.run(rows: rowCount, pageSize: pageSize, work: work).forEach(line)
line(
    "queue \(pushCount) local inserts (row + operation, one transaction each): \(ratio(queueTime)) s, \(rate(pushCount, queueTime)) ops/s"
)
line(
    "  the same \(pushCount) in one transaction (client add --stdin): \(ratio(batchTime)) s, "
        + "\(rate(pushCount, batchTime)) ops/s, \(ratio(queueTime / batchTime))× one transaction each   "
        + "[target ≥ 3040 ops/s: 0.8× one transaction each before commits were durable, 3.8k]")
line(
    "push  \(pushCount) inserts, window \(window): \(ratio(pushTime)) s, \(rate(pushCount, pushTime)) ops/s   [target ≥ 2000 ops/s]"
)
line("  window 1 (strictly in queue order): \(ratio(orderedTime)) s, \(rate(pushCount, orderedTime)) ops/s")
line(
    "  over Datasync v3, window \(window): \(ratio(pushV3Time)) s, \(rate(pushCount, pushV3Time)) ops/s;  "
        + "v3 / v2 = \(ratio(pushV3Time / pushTime))   [target ≤ 1.1]")
line("  floor POST (same bodies, plain sequential requests): \(ratio(postTime)) s, \(rate(pushCount, postTime)) req/s")
line(
    "  push / floor = \(ratio(pushTime / postTime))   [target ≤ 1.1];  window 1 / floor = \(ratio(orderedTime / postTime))"
)
line(
    "slow link (todosync proxy --fault delay=25): push \(slowCount) inserts, window \(window): \(ratio(slowTime)) s, "
        + "\(rate(slowCount, slowTime)) ops/s"
)
line("  window 1: \(ratio(slowOrderedTime)) s, \(rate(slowCount, slowOrderedTime)) ops/s")
line(
    "  floor POST through the proxy, one after another: \(ratio(slowPostTime)) s, \(rate(slowCount, slowPostTime)) req/s"
)
line(
    "  floor / push = \(ratio(slowPostTime / slowTime))× faster   [target ≥ 12];  floor / window 1 = \(ratio(slowPostTime / slowOrderedTime))×"
)
line(
    "lossy link (20 % of POSTs dropped after the service applied them, delay=25): 120 inserts, "
        + "\(lossyArrived) on the service after \(lossyPushes) push(es)   [target: 120 in ≤ 3]")
line(
    "  2 % dropped: push \(slowCount) inserts, window \(window): \(ratio(dropsTime)) s in \(dropsPushes) push(es), "
        + "\(rate(slowCount, dropsTime)) ops/s, \(dropsArrived) on the service;  / lossless = "
        + "\(ratio(slowTime / dropsTime))   [target ≥ 0.8]")

// e. Pull and push over HTTPS against plain HTTP (`TLSRounds`), on the (stopped) service's file.
for text in try await TLSRounds.run(database: work + "/service.sqlite", rows: rowCount, pushes: pushCount, work: work) {
    line(text)
}
