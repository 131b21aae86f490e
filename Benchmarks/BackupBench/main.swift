import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import Storage
import Synchronization
@_spi(Testing) import TableService

// `backup-bench`: the continuous backup's cost and lag, and a restore's time (issue 51), in one
// run, release build, SQLite files in a temporary folder, inserts over HTTP on loopback:
//   1. insert rate, 16 connections for SECONDS (default 10) each: without a backup, with one,
//      without, with (alternated, so that the disk's mood hits both alike) → the ratio;
//   2. the backup's lag at RATE inserts/s (default 1,000) for SECONDS: for each insert, from its
//      answer to the end of the first round that began after it (its segment synced) → p50, p99, max;
//   3. a service of ROWS rows (default 1M) backed up, then inserts and changes for 12 minutes of its
//      clock (12 s: its clock runs 60× fast), then `ServiceRestore.restore` to its newest commit
//      minus 5 minutes, timed, and the rows checked.
let environment = ProcessInfo.processInfo.environment
let seconds = Double(environment["SECONDS_EACH"] ?? "") ?? 10
let rate = Double(environment["RATE"] ?? "") ?? 1000
let rows = Int(environment["ROWS"] ?? "") ?? 1_000_000
let work = NSTemporaryDirectory() + "backup-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

var configuration = HTTPClient.Configuration()
configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)

func percentile(_ values: [Double], _ share: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * share).rounded()))]
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

/// A count that racing tasks add to.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func add() { atomic.add(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}

/// Inserts one row; the answer's status.
func insert(_ base: String, _ id: String) async throws -> UInt {
    var request = HTTPClientRequest(url: base + "/tables/todoitem")
    request.method = .POST
    request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: #"{"id":"\#(id)","text":"a row of the backup bench, \#(id)"}"#))
    let response = try await http.execute(request, timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 1 << 20)
    return response.status.code
}

/// A service on a new file, backed up into `backup` when given; its clock runs `speed`× fast.
func service(_ name: String, backup: String?, speed: Double = 1, timings: Bool = false) throws -> RunningTableService {
    var configuration = TableService.Configuration(database: .sqlite(path: work + "/" + name), tables: ["todoitem"])
    if let backup { configuration.backup = BackupSettings(folder: backup) }
    configuration.recordsBackupTimings = timings
    if speed != 1 {
        let origin = Date()
        let start = Int64(origin.timeIntervalSince1970 * 1000)
        configuration.clock = { start + Int64(Date().timeIntervalSince(origin) * 1000 * speed) }
    }
    return try TableService.start(configuration, quiet: true)
}

/// Runs the service's backup until `body` returns, then stops both; prints what the backup did.
func withBackup<T: Sendable>(_ running: RunningTableService, _ body: () async throws -> T) async throws -> T {
    let shipping = running.service.backup.map { backup in Task { await backup.run() } }
    let result = try await body()
    await running.stop()
    shipping?.cancel()
    _ = await shipping?.value
    if let status = running.service.backup?.status {
        print(
            "  the backup: \(status.rounds) rounds, \(status.segments) segments, \(status.roundTime) in rounds; "
                + "the writer held \(status.writerHeldRounds) times, \(status.writerHeldTime) in all")
    }
    return result
}

/// CPU seconds (user and system) of this process so far: the service's and the inserters'.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Inserts with `connections` at once for `seconds`: inserts per second.
func closedLoop(_ base: String, prefix: String, connections: Int = 16) async throws -> Double {
    let deadline = ContinuousClock.now + .seconds(seconds)
    let done = Counter()
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for connection in 0..<connections {
            group.addTask {
                var number = 0
                while ContinuousClock.now < deadline {
                    number += 1
                    guard try await insert(base, "\(prefix)-\(connection)-\(number)") == 201 else {
                        fatalError("insert failed")
                    }
                    done.add()
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - started
    return Double(done.value) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

// 1. The insert rate with and without a backup.
var without: [Double] = []
var with: [Double] = []
var cpuWithout = 0.0
var cpuWith = 0.0
for round in 0..<3 {
    let plain = try service("plain-\(round).sqlite", backup: nil)
    var cpu = cpuSeconds()
    without.append(try await withBackup(plain) { try await closedLoop(plain.url, prefix: "p") })
    cpuWithout += (cpuSeconds() - cpu) / (without.last! * seconds)
    let backed = try service("backed-\(round).sqlite", backup: work + "/backup-\(round)")
    cpu = cpuSeconds()
    with.append(try await withBackup(backed) { try await closedLoop(backed.url, prefix: "b") })
    cpuWith += (cpuSeconds() - cpu) / (with.last! * seconds)
    print(
        "insert rate, 16 connections, round \(round + 1): without a backup \(format(without.last!, 0))/s, "
            + "with \(format(with.last!, 0))/s → \(format(with.last! / without.last!, 2))×")
}
let rateRatio = with.reduce(0, +) / without.reduce(0, +)
print(
    "insert rate with a backup against without: \(format(rateRatio, 2))× (target ≥ 0.9×); CPU per insert "
        + "(service and inserters) \(format(cpuWith / 3 * 1e6, 0)) µs against \(format(cpuWithout / 3 * 1e6, 0)) µs "
        + "→ \(format(cpuWith / cpuWithout, 2))×")

// 2. The lag at a steady rate.
let paced = try service("paced.sqlite", backup: work + "/backup-paced", timings: true)
let answered = Mutex<[ContinuousClock.Instant]>([])
try await withBackup(paced) {
    let start = ContinuousClock.now
    let count = Int(rate * seconds)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for number in 0..<count {
            try await Task.sleep(until: start + .seconds(Double(number) / rate), clock: .continuous)
            group.addTask {
                guard try await insert(paced.url, "r-\(number)") == 201 else { fatalError("insert failed") }
                let now = ContinuousClock.now
                answered.withLock { $0.append(now) }
            }
        }
        try await group.waitForAll()
    }
    // One more round after the last answer.
    try await paced.service.backup!.shipNow()
}
let timings = paced.service.backup!.roundTimings
let lags = answered.withLock { $0 }.compactMap { answer -> Double? in
    guard let round = timings.first(where: { $0.readAt >= answer }) else { return nil }
    let lag = round.durableAt - answer
    return Double(lag.components.seconds) * 1000 + Double(lag.components.attoseconds) / 1e15
}
let achieved = Double(answered.withLock { $0.count }) / seconds
print(
    "backup lag at \(format(achieved, 0)) inserts/s (\(lags.count) inserts, \(timings.count) rounds): "
        + "p50 \(format(percentile(lags, 0.5))) ms, p99 \(format(percentile(lags, 0.99))) ms, "
        + "max \(format(lags.max() ?? .nan)) ms (target p99 ≤ 1,000 ms)")

// 3. A restore of a large service to its newest commit minus 5 minutes.
let bigPath = work + "/big.sqlite"
do {
    // The table and its text column, through the service; then the rows straight into the file.
    let seed = try service("big.sqlite", backup: nil)
    _ = try await insert(seed.url, "first")
    await seed.stop()
    let queue = try DatabaseQueue(path: bigPath)
    let origin = Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000
    let started = ContinuousClock.now
    try queue.write { db in
        let statement = try db.makeStatement(
            sql:
                #"INSERT INTO "todoitem" ("id", "createdAt", "updatedAt", "version", "deleted", "text") VALUES (?, ?, ?, ?, 0, ?)"#
        )
        for number in 0..<rows {
            let stamp = origin + Int64(number)
            try statement.execute(arguments: [
                String(format: "seed-%08d", number), stamp, stamp, String(stamp, radix: 16), "seeded row \(number)",
            ])
        }
    }
    try queue.close()
    print("seeded \(rows) rows in \(ContinuousClock.now - started)")
}
let big = try service("big.sqlite", backup: work + "/backup-big", speed: 60)
let bigBackup = big.service.backup!
try await withBackup(big) {
    try await bigBackup.shipNow()
    print(
        "base copy of \((try? FileManager.default.attributesOfItem(atPath: bigPath)[.size] as? Int).map { $0 >> 20 } ?? 0) MB made"
    )
    let deadline = ContinuousClock.now + .seconds(12)
    var number = 0
    while ContinuousClock.now < deadline {
        number += 1
        _ = try await insert(big.url, "late-\(number)")
        try await Task.sleep(for: .milliseconds(2))
    }
}
let catalog = try BackupCatalog(folder: BackupFolder(path: work + "/backup-big"))
let target = catalog.newest - 5 * 60_000
let restored = work + "/restored.sqlite"
let restoreStarted = ContinuousClock.now
let outcome = try ServiceRestore.restore(
    backupFolder: work + "/backup-big", database: restored, to: .at(target), now: catalog.newest + 1)
let restoreTime = ContinuousClock.now - restoreStarted
let restoredQueue = try DatabaseQueue(path: restored)
let (count, newest) = try restoredQueue.read { db in
    (
        try Int.fetchOne(db, sql: #"SELECT count(*) FROM "todoitem""#) ?? 0,
        try Int64.fetchOne(db, sql: #"SELECT max("updatedAt") FROM "todoitem""#) ?? 0
    )
}
print(
    "restore of \(count) rows to the newest commit − 5 min (\(outcome.segments) segments applied): "
        + "\(restoreTime) (target ≤ 60 s); newest row \(format(Double(target - newest) / 1000)) s before the time")
try await http.shutdown().get()
