import AsyncHTTPClient
import Dashboard
import Foundation
import NIOCore
import SyncClient
import SyncProtocol
import TableService
import Views

// `live-bench EDITS [TODOSYNC_BINARY]`: the change channel, release build, baselines in the same run
// (see Benchmarks/live-bench.sh):
//   a. A's edit → B's store: two dashboards (devices A and B) live on one SQLite service; A adds a
//      row, the time until B's store holds it; p50/p99 over EDITS edits (one at a time). Baseline:
//      the same with --live off (auto-sync every 5 s, its shortest), over a few edits.
//   b. The same with two PostgreSQL instances (A writes through one, B follows the other), when
//      TODOSYNC_BENCH_POSTGRES_URL names a database, with IDLE_ON_B (default 10,000) idle
//      subscribers of another table on B's instance.
//   c. 1,000 idle subscribers on one `todosync serve` process (TODOSYNC_BINARY): memory per
//      subscriber, CPU and requests over an idle minute (IDLE_SECONDS), against 1,000 clients
//      polling every 10 s.

let arguments = CommandLine.arguments.dropFirst()
let edits = arguments.first.flatMap(Int.init) ?? 500
let binary = arguments.dropFirst().first
let environment = ProcessInfo.processInfo.environment
let idleSeconds = environment["IDLE_SECONDS"].flatMap(Int.init) ?? 60
let subscribers = environment["SUBSCRIBERS"].flatMap(Int.init) ?? 1_000
let idleOnB = environment["IDLE_ON_B"].flatMap(Int.init) ?? 10_000

func line(_ text: String) {
    print(text)
    fflush(nil)
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ values: [Double], _ share: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * share).rounded()))]
}

func format(_ value: Double) -> String { String(format: "%.1f", value) }

/// An HTTP client with room for `connections` open at once.
func client(connections: Int) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections + 16
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}

/// `count` event streams of `table`'s changes at `base`, each open (its first event, the table's
/// cursor now, not read yet).
func subscribe(
    _ count: Int, to table: String, at base: String, with http: HTTPClient
) async throws
    -> [HTTPClientResponse]
{
    var streams: [HTTPClientResponse] = []
    for _ in 0..<count {
        var request = HTTPClientRequest(url: base + "/tables/\(table)/$changes")
        request.headers.add(name: "Accept", value: "text/event-stream")
        request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
        let response = try await http.execute(request, deadline: .distantFuture)
        precondition(response.status.code == 200, "subscribing answered \(response.status.code)")
        streams.append(response)
    }
    return streams
}

let work = NSTemporaryDirectory() + "live-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

/// A device: a dashboard syncing with `remote` by itself, live or polling every 5 s.
func device(_ name: String, remote: String, live: LiveMode) async throws -> Dashboard {
    var configuration = DashboardConfiguration(
        port: 0, dataDirectory: URL(fileURLWithPath: work + "/" + name + "-" + UUID().uuidString),
        resources: try ResourceFolders.locate(), remote: .url(URL(string: remote)!, applicationKey: nil))
    configuration.autoSyncInterval = live == .off ? 5 : 3600
    configuration.live = live
    return try await Dashboard.start(configuration)
}

/// Waits until the device's header says it follows the change channel.
func waitUntilLive(_ dashboard: Dashboard) async throws {
    for _ in 0..<1000 {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: dashboard.url + "/api/status"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        if String(buffer: body).contains(#""follow":"live""#) { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    fatalError("\(dashboard.url) never went live")
}

/// A's edits, one at a time, each timed until B's store holds it.
func editLatencies(from a: Dashboard, to b: Dashboard, count: Int, prefix: String) async throws -> [Double] {
    var latencies: [Double] = []
    let table = b.context.table("todoitem")
    var changes = b.context.storeChanges().makeAsyncIterator()
    for index in 0..<count {
        let id = "\(prefix)-\(index)"
        let start = ContinuousClock.now
        try await a.context.table("todoitem").insert(["id": .string(id), "text": .string("edit \(index)")])
        while try table.item(id: id) == nil {
            guard await changes.next() != nil else { fatalError("B's store closed") }
        }
        latencies.append(milliseconds(ContinuousClock.now - start))
    }
    return latencies
}

func report(_ label: String, _ latencies: [Double]) -> Double {
    let p50 = percentile(latencies, 0.5)
    line("\(label): p50 \(format(p50)) ms, p99 \(format(percentile(latencies, 0.99))) ms over \(latencies.count) edits")
    return p50
}

// a. SQLite, live against polling.
let sqlite = try TableService.start(
    .init(database: .sqlite(path: work + "/service.sqlite"), tables: ["todoitem"]), port: 0, quiet: true)
do {
    let a = try await device("a", remote: sqlite.url, live: .auto)
    let b = try await device("b", remote: sqlite.url, live: .auto)
    try await waitUntilLive(a)
    try await waitUntilLive(b)
    let live = report(
        "a. A's edit → B's store, live (SQLite)", try await editLatencies(from: a, to: b, count: edits, prefix: "live"))
    await a.stop()
    await b.stop()
    let pollA = try await device("poll-a", remote: sqlite.url, live: .off)
    let pollB = try await device("poll-b", remote: sqlite.url, live: .off)
    let polled = report(
        "   baseline: polling every 5 s", try await editLatencies(from: pollA, to: pollB, count: 6, prefix: "poll"))
    line("   polling / live (p50): \(format(polled / live))×")
    await pollA.stop()
    await pollB.stop()
}
await sqlite.stop()

// b. Two PostgreSQL instances.
if let url = environment["TODOSYNC_BENCH_POSTGRES_URL"] {
    let location = try PostgresLocation(url: url, poolSize: 8)
    var configuration = TableService.Configuration(database: .postgres(location), tables: ["todoitem", "idle"])
    configuration.maxSubscribers = idleOnB + 100
    let first = try TableService.start(configuration, port: 0, quiet: true)
    let second = try TableService.start(configuration, port: 0, quiet: true)
    try await first.service.ready()
    try await second.service.ready()
    let idleHTTP = client(connections: idleOnB)
    let idle = try await subscribe(idleOnB, to: "idle", at: second.url, with: idleHTTP)
    let a = try await device("pg-a", remote: first.url, live: .auto)
    let b = try await device("pg-b", remote: second.url, live: .auto)
    try await waitUntilLive(a)
    try await waitUntilLive(b)
    _ = report(
        "b. A's edit → B's store, two PostgreSQL instances, \(idle.count) idle subscribers on B's",
        try await editLatencies(from: a, to: b, count: edits, prefix: "pg-\(UUID().uuidString.prefix(8))"))
    await a.stop()
    await b.stop()
    try await idleHTTP.shutdown().get()
    await first.stop()
    await second.stop()
} else {
    line("b. (two PostgreSQL instances: set TODOSYNC_BENCH_POSTGRES_URL)")
}

// c. Idle subscribers on a `todosync serve` process.
guard let binary else {
    line("c. (idle subscribers: give the todosync binary)")
    exit(0)
}

/// The process's resident memory (kB) and CPU time (clock ticks), from /proc.
func usage(_ pid: Int32) -> (rssKB: Int, ticks: Int) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let rss =
        status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    let fields = stat.split(separator: ")").last.map { $0.split(separator: " ") } ?? []
    // utime and stime are fields 14 and 15 of stat; after "pid (comm)", the 12th and 13th.
    let ticks = fields.count > 13 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
    return (rss, ticks)
}

/// The table requests answered and the database's read transactions, from one /metrics scrape
/// (a scrape reads the tables once itself, for `todosync_rows`, and counts that read).
func scrape(_ http: HTTPClient, _ base: String) async throws -> (requests: Double, reads: Double) {
    let response = try await http.execute(HTTPClientRequest(url: base + "/metrics"), timeout: .seconds(10))
    let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
    func sum(_ name: String) -> Double {
        text.split(separator: "\n").filter { $0.hasPrefix(name) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
    return (sum("todosync_http_requests_total"), sum("todosync_database_reads_total"))
}

let port = 20_000 + Int.random(in: 0..<20_000)
let serve = Process()
serve.executableURL = URL(fileURLWithPath: binary)
serve.arguments = [
    "serve", "--port", String(port), "--quiet", "--database", work + "/idle.sqlite",
    "--max-subscribers", String(subscribers + 10),
]
serve.standardOutput = FileHandle.nullDevice
try serve.run()
defer { serve.terminate() }
let base = "http://127.0.0.1:\(port)"
let http = client(connections: subscribers)
for _ in 0..<500 {
    if (try? await scrape(http, base)) != nil { break }
    try await Task.sleep(for: .milliseconds(20))
}
/// Inserts the row `id` into `todoitem` at `base`.
func insert(_ id: String, at base: String, with http: HTTPClient) async throws {
    var request = HTTPClientRequest(url: base + "/tables/todoitem")
    request.method = .POST
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: #"{"id":"\#(id)"}"#))
    _ = try await http.execute(request, timeout: .seconds(10))
}
try await insert("seed", at: base, with: http)
try await Task.sleep(for: .seconds(1))
let before = usage(serve.processIdentifier)
let streams = try await subscribe(subscribers, to: "todoitem", at: base, with: http)
try await Task.sleep(for: .seconds(2))
let opened = usage(serve.processIdentifier)
let quiet = try await scrape(http, base)
try await Task.sleep(for: .seconds(Double(idleSeconds)))
let idle = usage(serve.processIdentifier)
let after = try await scrape(http, base)
let idleRequests = after.requests - quiet.requests
// Less the read of the second scrape itself.
let idleReads = after.reads - quiet.reads - 1
let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
let cpuShare = Double(idle.ticks - opened.ticks) / ticksPerSecond / Double(idleSeconds)
let perSubscriber = Double(opened.rssKB - before.rssKB) / Double(subscribers)
line("c. \(subscribers) idle subscribers on one todosync serve (SQLite), an idle \(idleSeconds) s:")
line("   memory: \(format(perSubscriber)) KB per subscriber (RSS \(before.rssKB) kB → \(opened.rssKB) kB)")
line(
    "   CPU: \(String(format: "%.2f", cpuShare * 100)) % of a core; requests: \(Int(idleRequests)); database reads: \(Int(idleReads))"
)
let polling = Double(subscribers) * Double(idleSeconds) / 10
line(
    "   baseline: \(subscribers) clients polling every 10 s send \(Int(polling)); live/polling: \(String(format: "%.3f", idleRequests / polling))×"
)

/// Reads `stream` until its second `change` event (the first is the cursor it was opened at).
func secondEvent(_ stream: HTTPClientResponse) async throws {
    var text = ""
    for try await chunk in stream.body {
        text += String(buffer: chunk)
        if text.components(separatedBy: "event: change").count > 2 { return }
    }
}

// One write, and the time until every idle subscriber has its event.
let write = ContinuousClock.now
let woken = try await withThrowingTaskGroup(of: Double.self) { group in
    for stream in streams {
        group.addTask {
            try await secondEvent(stream)
            return milliseconds(ContinuousClock.now - write)
        }
    }
    try await insert("wake", at: base, with: http)
    var times: [Double] = []
    for try await time in group { times.append(time) }
    return times
}
line(
    "   one write wakes all \(woken.count): p50 \(format(percentile(woken, 0.5))) ms, p99 \(format(percentile(woken, 0.99))) ms"
)
