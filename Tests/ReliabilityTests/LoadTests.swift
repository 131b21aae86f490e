import Foundation
import SyncClient
import SyncProtocol
import Synchronization
import TestSupport
import Testing

/// Many clients pushing to one service at once: every change is applied or reported as a
/// conflict (settled by the server-wins policy here), none is lost, and reads keep being answered.
///
/// CI runs 50 clients × 40 changes; the full size is `LOAD_CHANGES=200 swift test --filter LoadTests`.
@Suite struct LoadTests {
    static let clients = Int(ProcessInfo.processInfo.environment["LOAD_CLIENTS"] ?? "") ?? 50
    static let changesPerClient = Int(ProcessInfo.processInfo.environment["LOAD_CHANGES"] ?? "") ?? 40
    static let sharedItems = 20

    /// What one client did.
    struct ClientReport: Sendable {
        var latencies: [Duration] = []
        var pushed = 0
        var resolvedByServer = 0
        var other: [String] = []
        var inserted: [String: String] = [:]  // id → text
        var ownFinal: [String: String] = [:]  // id → last text of our own items
        var sharedApplied: [String: Set<String>] = [:]  // shared id → texts the server accepted
    }

    @Test func fiftyClientsPushingAtOnceLoseNothingAndTheServiceKeepsAnswering() async throws {
        try await withReliabilityHarness { harness in
            let seeder = try harness.client("seeder", direct: true)
            for index in 0..<Self.sharedItems {
                try await seeder.table("todoitem").insert([
                    "id": .string("shared-\(index)"), "text": "shared", "complete": false,
                ])
            }
            _ = try await seeder.push()
            try await seeder.close()

            let contexts = try (0..<Self.clients).map { index in
                try SyncContext(
                    path: harness.folder.file("load-\(index).sqlite"),
                    configuration: SyncConfiguration(
                        remoteURL: URL(string: harness.service.url)!, requestTimeout: 30, conflictPolicy: .serverWins))
            }
            for context in contexts { try await context.table("todoitem").pull(queryId: "all") }

            // A reader that keeps asking during the load, again as soon as it is answered.
            let loadRunning = Atomic<Bool>(true)
            let reader = Task { () -> (answered: Int, failed: Int, slowest: Duration) in
                var answered = 0, failed = 0
                var slowest = Duration.zero
                while loadRunning.load(ordering: .acquiring) {
                    let start = ContinuousClock.now
                    if let reply = try? await harness.get("/tables/todoitem?$top=5&$orderby=updatedAt%20desc"),
                        reply.status == 200
                    {
                        answered += 1
                    } else {
                        failed += 1
                    }
                    slowest = max(slowest, ContinuousClock.now - start)
                }
                return (answered, failed, slowest)
            }

            let started = ContinuousClock.now
            let reports = try await withThrowingTaskGroup(of: ClientReport.self) { group in
                for (index, context) in contexts.enumerated() {
                    group.addTask { try await Self.run(client: index, context) }
                }
                return try await group.reduce(into: [ClientReport]()) { $0.append($1) }
            }
            let elapsed = ContinuousClock.now - started
            loadRunning.store(false, ordering: .releasing)
            let reads = await reader.value

            // Every change was applied or reported as a conflict; nothing else happened.
            let total = Self.clients * Self.changesPerClient
            let other = reports.flatMap(\.other)
            #expect(other.isEmpty, "unexpected outcomes: \(other.prefix(5))")
            #expect(reports.map { $0.pushed + $0.resolvedByServer }.reduce(0, +) == total)
            for context in contexts {
                #expect(try context.operations.all().isEmpty)
            }
            // None lost: every insert is on the service, own items hold their last value, shared
            // items hold a value some client had applied.
            let server = try await harness.serviceRows()
            for report in reports {
                for (id, text) in report.inserted where report.ownFinal[id] == nil {
                    #expect(server[id]?["text"]?.stringValue == text, "insert \(id) lost")
                }
                for (id, text) in report.ownFinal {
                    #expect(server[id]?["text"]?.stringValue == text, "update of \(id) lost")
                }
            }
            let applied = reports.reduce(into: [String: Set<String>]()) { all, report in
                for (id, texts) in report.sharedApplied { all[id, default: []].formUnion(texts) }
            }
            for index in 0..<Self.sharedItems {
                let id = "shared-\(index)"
                let text = server[id]?["text"]?.stringValue ?? "?"
                #expect(
                    text == "shared" || applied[id]?.contains(text) == true, "\(id) holds \(text), which nobody pushed")
            }
            #expect(server.count == Self.sharedItems + reports.map(\.inserted.count).reduce(0, +))
            #expect(reads.failed == 0 && reads.answered > 0, "reads during the load: \(reads)")

            let latencies = reports.flatMap(\.latencies).sorted()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            func milliseconds(_ duration: Duration) -> String {
                String(
                    format: "%.1f ms",
                    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
            }
            let resolved = reports.map(\.resolvedByServer).reduce(0, +)
            print(
                "load: \(Self.clients) clients × \(Self.changesPerClient) changes = \(total) pushes in "
                    + String(format: "%.2f s = %.0f ops/s", seconds, Double(total) / seconds)
                    + "; push latency p50 \(milliseconds(latencies[latencies.count / 2])), p99 \(milliseconds(latencies[latencies.count * 99 / 100])); "
                    + "\(resolved) conflicts settled by the server; \(reads.answered) reads during the load, slowest \(milliseconds(reads.slowest))"
            )
            for context in contexts { try await context.close() }
        }
    }

    /// One client: changes one at a time, each pushed at once (so each push measures one change).
    static func run(client: Int, _ context: SyncContext) async throws -> ClientReport {
        var report = ClientReport()
        var random = SystemRandomNumberGenerator()
        let table = context.table("todoitem")
        var own: [String] = []
        for change in 0..<changesPerClient {
            let roll = Int.random(in: 0..<10, using: &random)
            var shared: (id: String, text: String)?
            if roll < 6 || own.isEmpty {
                let id = "c\(client)-\(change)"
                let text = "client \(client) item \(change)"
                try await table.insert(["id": .string(id), "text": .string(text), "complete": false])
                report.inserted[id] = text
                own.append(id)
            } else if roll < 8 {
                let id = own[Int.random(in: 0..<own.count, using: &random)]
                let text = "client \(client) edit \(change)"
                try await table.update(["id": .string(id), "text": .string(text)])
                report.ownFinal[id] = text
            } else {
                let id = "shared-\(Int.random(in: 0..<sharedItems, using: &random))"
                let text = "client \(client) shared \(change)"
                try await table.update(["id": .string(id), "text": .string(text)])
                shared = (id, text)
            }
            let start = ContinuousClock.now
            let result = try await context.push()
            report.latencies.append(ContinuousClock.now - start)
            report.pushed += result.pushed.count
            report.resolvedByServer += result.resolved.count
            if !result.conflicts.isEmpty || !result.failed.isEmpty || !result.skipped.isEmpty
                || result.pushed.count + result.resolved.count != 1
            {
                report.other.append("client \(client) change \(change): \(result.summary)")
            }
            if let shared, result.pushed.count == 1 { report.sharedApplied[shared.id, default: []].insert(shared.text) }
        }
        return report
    }
}
