import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import SyncClient
import SyncProtocol
import Synchronization
@_spi(Testing) import TableService

// `schema-bench ROWS`: a schema change over ROWS rows (default 1,000,000), release build, baselines
// in the same run (see Benchmarks/schema-bench.sh):
//   a. A default and a rename reach a client's store: from the start of the service with the new
//      schema until the client's store holds every row with the default, pulling as it goes;
//      rows/s, against the baseline of the same client pulling the same rows before the change.
//   b. Writers during the backfill: one writer inserting rows one after the other; its p50/p99
//      while the backfill runs against the same writer before the change.

let rows = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let schema1 = #"{"todo": {"columns": {"text": "string", "complete": "boolean", "estimate": "integer"}}}"#
let schema2 = """
    {"todo": {"columns": {"title": {"type": "string", "renamedFrom": "text"}, "complete": "boolean",
        "estimate": "number", "priority": {"type": "integer", "default": 3}}}}
    """

func line(_ text: String) {
    print(text)
    fflush(nil)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func percentile(_ values: [Double], _ share: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * share).rounded()))]
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

let work = NSTemporaryDirectory() + "schema-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }
let database = work + "/service.sqlite"

func start(_ schema: String, port: Int = 0) async throws -> RunningTableService {
    var configuration = TableService.Configuration(database: .sqlite(path: database))
    configuration.schema = try ServiceSchema(json: Data(schema.utf8))
    let running = try TableService.start(configuration, port: port, quiet: true)
    try await running.service.ready()
    return running
}

/// Rows written straight into the service's file (what a year of writes would have left there).
func seed(_ count: Int) throws {
    let queue = try DatabaseQueue(path: database)
    defer { try? queue.close() }
    try queue.write { db in
        let statement = try db.makeStatement(
            sql: "INSERT INTO todo (id, createdAt, updatedAt, version, deleted, text, complete, estimate) "
                + "VALUES (?, ?, ?, ?, 0, ?, 0, ?)")
        let base: Int64 = 1_700_000_000_000
        for index in 0..<count {
            let stamp = base + Int64(index)
            let version = withUnsafeBytes(of: stamp.bigEndian) { Data($0).base64EncodedString() }
            try statement.execute(arguments: [
                String(format: "row%08d", index), stamp, stamp, version, "todo \(index)", index % 10,
            ])
        }
    }
}

/// One writer inserting `count` rows one after the other; each insert's milliseconds.
func writer(_ url: String, count: Int, prefix: String) async throws -> [Double] {
    var latencies: [Double] = []
    let clock = ContinuousClock()
    for index in 0..<count {
        var request = HTTPClientRequest(url: url + "/tables/todo")
        request.method = .POST
        request.headers.add(name: "ZUMO-API-VERSION", value: "3.0.0")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"id": "\#(prefix)\#(index)", "text": "written"}"#))
        let started = clock.now
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 201 else { throw CocoaError(.fileWriteUnknown) }
        latencies.append(seconds(clock.now - started) * 1000)
    }
    return latencies
}

line("schema-bench: \(rows) rows, SQLite, release build")
var running = try await start(schema1)
await running.stop()
try seed(rows)
running = try await start(schema1)
let context = try SyncContext(
    path: work + "/client.sqlite", tables: [TableDescription(name: "todo", columns: [])],
    configuration: SyncConfiguration(remoteURL: URL(string: running.url)!, tableProtocol: .v3))
let clock = ContinuousClock()
let pullStarted = clock.now
_ = try await context.pull("todo", queryId: "all", settings: PullSettings(pageSize: 1000))
let baselineRate = Double(rows) / seconds(clock.now - pullStarted)
line("a. baseline: the client pulls \(rows) rows at \(format(baselineRate, 0)) rows/s")
let writes = 2_000
let before = try await writer(running.url, count: writes, prefix: "before")
let port = running.port
await running.stop()

let changeStarted = clock.now
// On the same port: the client keeps its address.
running = try await start(schema2, port: port)
let backfillDone = Atomic<Bool>(false)
let backfill = Task {
    await running.service.schemaBackfillsFinished()
    backfillDone.store(true, ordering: .releasing)
    return clock.now - changeStarted
}
let during = Task { try await writer(running.url, count: writes, prefix: "during") }
// Pulls as the rows come; the last pull begins after the backfill ended.
while true {
    let done = backfillDone.load(ordering: .acquiring)
    _ = try await context.pull("todo", queryId: "all", settings: PullSettings(pageSize: 1000))
    if done { break }
}
let changeRate = Double(rows) / seconds(clock.now - changeStarted)
let backfillSeconds = seconds(await backfill.value)
line(
    "a. the backfill (service start to the last batch): \(format(backfillSeconds, 2)) s, "
        + "\(format(Double(rows) / backfillSeconds, 0)) rows/s")
let sample = try context.table("todo").item(id: String(format: "row%08d", rows - 1))
line(
    "a. the default and the rename reach the client's store: \(format(changeRate, 0)) rows/s "
        + "(\(format(changeRate / baselineRate, 2))× the baseline pull; target ≥ 50,000 rows/s); "
        + "last row: priority=\(sample?["priority"]?.jsonText ?? "?") title=\(sample?["title"]?.jsonText ?? "?")")
let whileBackfilling = try await during.value
let (p50Before, p99Before) = (percentile(before, 0.5), percentile(before, 0.99))
let (p50During, p99During) = (percentile(whileBackfilling, 0.5), percentile(whileBackfilling, 0.99))
line(
    "b. a writer's inserts: before p50 \(format(p50Before, 2)) ms p99 \(format(p99Before, 2)) ms; during the backfill "
        + "p50 \(format(p50During, 2)) ms p99 \(format(p99During, 2)) ms (\(format(p99During / p99Before, 2))× p99; "
        + "target ≤ 2×)")

// c. What pulling rows the store already holds costs the client without a backfill beside it: every
//    row stamped again straight in the file (the service stopped), then the same client pulls them.
await running.stop()
do {
    let queue = try DatabaseQueue(path: database)
    try queue.write { db in try db.execute(sql: "UPDATE todo SET updatedAt = updatedAt + 100000000000") }
    try queue.close()
}
running = try await start(schema2, port: port)
let repullStarted = clock.now
_ = try await context.pull("todo", queryId: "all", settings: PullSettings(pageSize: 1000))
let repullRate = Double(rows) / seconds(clock.now - repullStarted)
line(
    "c. the same client pulling the same rows again, stamped in place, no backfill running: "
        + "\(format(repullRate, 0)) rows/s (\(format(changeRate / repullRate, 2))× of it end to end)")
try await context.close()
await running.stop()
