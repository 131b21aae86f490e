import Dashboard
import Foundation
import GRDB
import SyncClient
import SyncProtocol
import TableService
import Views

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// `conflict-bench [CONFLICTS] [ENTRIES]`: conflicts settled by policy, and the journal page, with
// baselines measured in the same run (release build; see Benchmarks/conflict-bench.sh):
//   a. push CONFLICTS (default 1,000) updates that all meet a 412 and merge by the merge policy
//      (server changed `complete`, client changed `text`), against the same push with no conflicts;
//   b. GET /journal of a dashboard whose journal holds ENTRIES (default 10,000) entries, p50 of
//      200 requests, against the same page with an empty journal and with one page (25 entries).

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let conflictCount = arguments.first ?? 1_000
let entryCount = arguments.dropFirst().first ?? 10_000

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func line(_ text: String) {
    print(text)
    fflush(nil)
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

let work = NSTemporaryDirectory() + "conflict-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

let service = try TableService.start(
    .init(database: .sqlite(path: work + "/service.sqlite"), tables: ["todoitem"]), port: 0, quiet: true)
let remote = URL(string: service.url)!

/// A plain request to the service (seeding and the other device's edits; not measured).
func send(_ method: String, _ path: String, _ body: String) throws {
    var request = URLRequest(url: URL(string: service.url + path)!)
    request.httpMethod = method
    request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(body.utf8)
    let done = DispatchSemaphore(value: 0)
    let status = Locked(0)
    URLSession.shared.dataTask(with: request) { _, response, _ in
        status.set((response as? HTTPURLResponse)?.statusCode ?? 0)
        done.signal()
    }.resume()
    done.wait()
    precondition((200..<300).contains(status.get()), "\(method) \(path) answered \(status.get())")
}

/// A value shared with a URLSession callback.
final class Locked<Value: Sendable>: @unchecked Sendable {  // guarded by `lock`
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}

/// A store holding `count` items `prefix-i` pulled from the service, each then edited locally.
func editedStore(_ name: String, prefix: String, count: Int, serverEdits: Bool) async throws -> SyncContext {
    for index in 0..<count {
        try send("POST", "/tables/todoitem", #"{"id":"\#(prefix)-\#(index)","text":"todo \#(index)","complete":false}"#)
    }
    let context = try SyncContext(path: work + "/\(name).sqlite", configuration: .init(remoteURL: remote))
    _ = try await context.table("todoitem").pull(settings: PullSettings(pageSize: 1000))
    if serverEdits {
        for index in 0..<count {
            try send("PATCH", "/tables/todoitem/\(prefix)-\(index)", #"{"complete":true}"#)
        }
    }
    for index in 0..<count {
        try await context.table("todoitem").update([
            "id": .string("\(prefix)-\(index)"), "text": .string("edited \(index)"),
        ])
    }
    return context
}

// a. Conflicts settled by the merge policy vs the same push without conflicts, in four rounds of a
// quarter each that alternate which push goes first (one push of each drifted by up to 30% from run
// to run with the machine).
line("preparing \(conflictCount) updates with and without conflicts…")
let rounds = 4
var plainTime = 0.0
var mergeTime = 0.0
for round in 0..<rounds {
    let count = conflictCount / rounds
    let plain = try await editedStore(
        "plain-\(round)", prefix: "plain-\(round)", count: count, serverEdits: false)
    let conflicted = try await editedStore(
        "conflicted-\(round)", prefix: "conflict-\(round)", count: count, serverEdits: true)
    for pushing in round % 2 == 0 ? [plain, conflicted] : [conflicted, plain] {
        var result = PushResult()
        let time = try await seconds { result = try await pushing.push() }
        precondition(result.pushed.count == count, "push: \(result.summary)")
        if pushing === plain { plainTime += time } else { mergeTime += time }
    }
    let journaled = try conflicted.journal.count()
    precondition(journaled == count, "journaled \(journaled) of \(count)")
}
await service.stop()

// b. The journal page: ENTRIES entries vs none and vs one page (25), p50 of 200 GETs each.
func journalP50(entries: Int) async throws -> Double {
    let folder = URL(fileURLWithPath: work + "/dashboard-\(entries)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let context = try SyncContext(path: folder.appendingPathComponent("store.sqlite").path)
    try await context.setRetention(of: .journal, to: max(entries, 1))
    try await context.close()
    if entries > 0 {
        // Seeded with plain SQL (not measured): entries shaped like the merges of part a.
        let pool = try DatabaseQueue(path: folder.appendingPathComponent("store.sqlite").path)
        try await pool.write { db in
            let statement = try db.makeStatement(
                sql: """
                    INSERT INTO __journal (id, tableName, itemId, operation, decision, decidedBy, base, client, server,
                        result, versionBefore, versionAfter, recordedAt, searchText)
                    VALUES (?, 'todoitem', ?, 'update', 'merge', 'merge-policy', ?, ?, ?, ?, 'v1', 'v2',
                        '2026-11-23T07:00:00.000Z', ?)
                    """)
            for index in 0..<entries {
                let base = #"{"id":"i\#(index)","text":"todo \#(index)","complete":false,"version":"v0"}"#
                let client = #"{"id":"i\#(index)","text":"edited \#(index)","complete":false}"#
                let server = #"{"id":"i\#(index)","text":"todo \#(index)","complete":true,"version":"v1"}"#
                let result = #"{"id":"i\#(index)","text":"edited \#(index)","complete":true,"version":"v2"}"#
                try statement.execute(arguments: [
                    UUID().uuidString, "i\(index)", base, client, server, result, "i\(index) edited \(index)",
                ])
            }
        }
    }
    let dashboard = try await Dashboard.start(
        DashboardConfiguration(port: 0, dataDirectory: folder, resources: try ResourceFolders.locate()))
    var times: [Double] = []
    for round in 0..<220 {
        var elapsed = 0.0
        let url = URL(string: dashboard.url + "/journal")!
        elapsed = try await seconds { _ = try await URLSession.shared.data(from: url) }
        if round >= 20 { times.append(elapsed) }  // the first requests warm caches up
    }
    await dashboard.stop()
    times.sort()
    return times[times.count / 2]
}
let emptyP50 = try await journalP50(entries: 0)
let onePageP50 = try await journalP50(entries: 25)
let fullP50 = try await journalP50(entries: entryCount)

line("")
line(
    "push \(conflictCount) updates, no conflicts: \(format(plainTime)) s, "
        + "\(format(plainTime / Double(conflictCount) * 1000)) ms per update")
line(
    "push \(conflictCount) updates, each a 412 settled by the merge policy (journaled): \(format(mergeTime)) s, "
        + "\(format(mergeTime / Double(conflictCount) * 1000)) ms per conflict")
line("  per conflict / per plain update = \(format(mergeTime / plainTime))")
line("journal page p50, empty journal: \(format(emptyP50 * 1000)) ms")
line("journal page p50, 25 entries (one full page): \(format(onePageP50 * 1000)) ms")
line("journal page p50, \(entryCount) entries: \(format(fullP50 * 1000)) ms")
line(
    "  \(entryCount) entries / empty = \(format(fullP50 / emptyP50)), "
        + "\(entryCount) entries / one page = \(format(fullP50 / onePageP50))")
