import Foundation
import HTTPServer
import SyncClient
import TableService
import TestSupport

/// e. The sync client's pull and push over HTTPS (libmicrohttpd's TLS, a CA made for the run,
/// trusted with `--ca-file`) against the same over plain HTTP, alternating: two services, one
/// speaking each, on two copies of the same SQLite file (one SQLite file serves one instance).
enum TLSRounds {
    struct Figures {
        var pullPlain = 0.0
        var pullTLS = 0.0
        var pushPlain = 0.0
        var pushTLS = 0.0
    }

    /// `database` is a stopped service's file.
    static func run(database: String, rows: Int, pushes: Int, work: String) async throws -> [String] {
        let folder = try TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let copy = work + "/tls-service.sqlite"
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: database + suffix) {
            try FileManager.default.copyItem(atPath: database + suffix, toPath: copy + suffix)
        }
        let plain = try TableService.start(
            TableService.Configuration(database: .sqlite(path: database), tables: ["todoitem"]), quiet: true)
        let secure = try TableService.start(
            TableService.Configuration(database: .sqlite(path: copy), tables: ["todoitem"]), quiet: true,
            tls: certificates.server)
        var figures = Figures()
        let rounds = 3
        do {
            func context(_ name: String, _ service: RunningTableService) throws -> SyncContext {
                var sync = SyncConfiguration(remoteURL: URL(string: service.url)!)
                sync.caFile = certificates.caFile
                return try SyncContext(path: work + "/\(name).sqlite", configuration: sync)
            }
            for round in 0..<rounds {
                for tls in round % 2 == 0 ? [false, true] : [true, false] {
                    let store = try context("tls-pull-\(tls)-\(round)", tls ? secure : plain)
                    let start = ContinuousClock.now
                    let pulled = try await store.table("todoitem").pull(
                        queryId: "all", settings: PullSettings(pageSize: 1000))
                    let elapsed = seconds(since: start)
                    precondition(pulled.received >= rows, "pulled \(pulled.received) of \(rows)")
                    if tls { figures.pullTLS += elapsed } else { figures.pullPlain += elapsed }
                    try await store.close()
                }
            }
            let plainPush = try context("tls-push-plain", plain)
            let securePush = try context("tls-push-tls", secure)
            let pushRounds = min(10, pushes)
            for round in 0..<pushRounds {
                let indices = (pushes * round / pushRounds)..<(pushes * (round + 1) / pushRounds)
                for tls in round % 2 == 0 ? [false, true] : [true, false] {
                    let store = tls ? securePush : plainPush
                    for index in indices {
                        try await store.table("todoitem").insert([
                            "id": .string("tls-\(tls)-\(index)"),
                            "text": .string("task number \(index) with some words"),
                        ])
                    }
                    let start = ContinuousClock.now
                    let pushed = try await store.push()
                    let elapsed = seconds(since: start)
                    precondition(
                        pushed.pushed.count == indices.count, "pushed \(pushed.pushed.count) of \(indices.count)")
                    if tls { figures.pushTLS += elapsed } else { figures.pushPlain += elapsed }
                }
            }
        } catch {
            await plain.stop()
            await secure.stop()
            throw error
        }
        await plain.stop()
        await secure.stop()
        func rate(_ count: Int, _ time: Double) -> String { String(format: "%.0f/s", Double(count) / time) }
        let pulled = rows * rounds
        return [
            "e. over HTTPS (TLS 1.3, P-256 certificate of a CA made for the run) against plain HTTP, alternating:",
            "   pull \(rows) rows ×\(rounds): HTTPS \(String(format: "%.2f", figures.pullTLS)) s (\(rate(pulled, figures.pullTLS)))"
                + ", plain \(String(format: "%.2f", figures.pullPlain)) s (\(rate(pulled, figures.pullPlain)))"
                + " → \(String(format: "%.2f", figures.pullTLS / figures.pullPlain))× (goal ≤ 1.3×)",
            "   push \(pushes): HTTPS \(String(format: "%.2f", figures.pushTLS)) s (\(rate(pushes, figures.pushTLS)))"
                + ", plain \(String(format: "%.2f", figures.pushPlain)) s (\(rate(pushes, figures.pushPlain)))"
                + " → \(String(format: "%.2f", figures.pushTLS / figures.pushPlain))× (goal ≤ 1.3×)",
        ]
    }
}
