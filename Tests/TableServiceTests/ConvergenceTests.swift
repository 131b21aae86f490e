import Foundation
import GRDB
import HTTPTypes
import SyncProtocol
import Synchronization
import TestSupport
import Testing

/// In the spirit of Jepsen: writers insert, update and delete through two instances (one on
/// SQLite, which is one process) for a while, three clients pull incrementally all along in small
/// pages with the keyset cursor, and at the end every client holds exactly the rows and versions
/// the database holds. A row committed behind a client's cursor would be missing from it.
@Suite struct ConvergenceTests {
    /// Seconds of writing (`CONVERGENCE_SECONDS`, 20 by default).
    static let seconds = Double(ProcessInfo.processInfo.environment["CONVERGENCE_SECONDS"] ?? "") ?? 20

    @Test(.timeLimit(.minutes(10)), arguments: Backend.all)
    func incrementalPullersConvergeToTheDatabaseUnderConcurrentWriters(_ backend: Backend) async throws {
        try await withTestServer(backend, tables: ["conv"]) { first in
            try await withInstanceSharing(first) { second in
                let instances = [first, second]
                let writing = WriteActivity()

                let pulled = try await withThrowingTaskGroup(of: [String: String]?.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            try await Self.write(
                                as: writer, through: instances[writer % 2],
                                until: Date().addingTimeInterval(Self.seconds), telling: writing)
                            return nil
                        }
                    }
                    for client in 0..<3 {
                        group.addTask {
                            var puller = Puller(server: instances[client % 2])
                            while writing.isWriting {
                                // Caught up: again after the next write.
                                if try await !puller.pullPage() { await writing.nextWrite() }
                            }
                            // Catch up once the writers are done.
                            while try await puller.pullPage() {}
                            return puller.versions
                        }
                    }
                    var results: [[String: String]] = []
                    var writersLeft = 4
                    while let result = try await group.next() {
                        if let result {
                            results.append(result)
                        } else {
                            writersLeft -= 1
                            if writersLeft == 0 { writing.stop() }
                        }
                    }
                    return results
                }

                let truth = try await Self.databaseVersions(first)
                #expect(truth.count >= Int(Self.seconds), "the writers wrote only \(truth.count) rows")
                #expect(pulled.count == 3)
                for (index, versions) in pulled.enumerated() {
                    let missing = truth.keys.filter { versions[$0] == nil }
                    let stale = truth.keys.filter { versions[$0] != nil && versions[$0] != truth[$0] }
                    #expect(
                        missing.isEmpty, "client \(index) never saw \(missing.count) rows, such as \(missing.prefix(5))"
                    )
                    #expect(stale.isEmpty, "client \(index) holds an old version of \(stale.count) rows")
                    #expect(versions.count == truth.count)
                }
            }
        }
    }

    /// Inserts new rows, updates and deletes known ones (with `If-Match`, taking the server's
    /// version on a 412) until `deadline`, telling `activity` of each answer.
    static func write(
        as writer: Int, through server: TestServer, until deadline: Date, telling activity: WriteActivity
    ) async throws {
        var known: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        var count = 0
        while Date() < deadline {
            defer { activity.wrote() }
            count += 1
            let roll = Int.random(in: 0..<10, using: &generator)
            if known.isEmpty || roll < 5 {
                let id = "w\(writer)-\(count)"
                let reply = try await server.send(.post, "/tables/conv", json: ["id": id, "n": count])
                #expect(reply.status == 201, "\(reply.text)")
                if let version = reply.object?["version"] as? String { known[id] = version }
                continue
            }
            let id = known.keys.randomElement(using: &generator)!
            let headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0", .ifMatch: "\"\(known[id]!)\""]
            let reply =
                roll < 9
                ? try await server.send(.patch, "/tables/conv/\(id)", json: ["n": count], headers: headers)
                : try await server.send(.delete, "/tables/conv/\(id)", headers: headers)
            switch reply.status {
            case 200, 412: known[id] = reply.object?["version"] as? String
            case 404: known[id] = nil
            default: Issue.record("\(reply.status) \(reply.text)")
            }
            if roll == 9 { known[id] = nil }
        }
    }

    /// Every row's version, read from the database itself.
    static func databaseVersions(_ server: TestServer) async throws -> [String: String] {
        switch server.database {
        case .sqlite(let path):
            let queue = try sideConnection(try #require(path))
            return try await queue.read { db in
                try Dictionary(
                    uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, version FROM conv").map {
                        ($0[0] as String, $0[1] as String)
                    })
            }
        case .postgres(let location):
            let rows = try await TestPostgres.textRows(
                "SELECT \"id\", \"version\" FROM \"conv\"", url: location.displayURL)
            return Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) })
        }
    }
}

/// The writers of a convergence test as its pullers see them: whether they still write, and a wait
/// for their next answered write. A caught-up puller pulls again once there may be something to
/// pull, as a client following a change channel does, never after a pause of its own.
final class WriteActivity: Sendable {
    private let state = Mutex((writing: true, next: TestEvent()))

    /// Whether the writers still write (the pullers keep pulling until they stop).
    var isWriting: Bool { state.withLock { $0.writing } }

    /// A writer's write was answered: every waiting puller pulls again.
    func wrote() {
        state.withLock { state in
            defer { state.next = TestEvent() }
            return state.next
        }.signal()
    }

    /// The writers are done: no puller waits any more.
    func stop() {
        state.withLock { state in
            state.writing = false
            return state.next
        }.signal()
    }

    /// Returns once a writer's write is answered after this call, or the writers are done.
    func nextWrite() async {
        await state.withLock { $0.writing ? $0.next : nil }?.wait()
    }
}

/// A client pulling `conv` incrementally in pages (of 7 unless told), as the sync client does:
/// ordered by `updatedAt, id`, after the last row it saw, soft-deleted rows included.
struct Puller {
    let server: TestServer
    var pageSize = 7
    var versions: [String: String] = [:]
    var cursor: (updatedAt: String, id: String)?

    /// Pulls one page; whether it was full (there may be more).
    mutating func pullPage() async throws -> Bool {
        var query = "$orderby=updatedAt,id&$top=\(pageSize)&__includeDeleted=true"
        if let cursor {
            let filter =
                "(updatedAt gt datetimeoffset'\(cursor.updatedAt)') or "
                + "(updatedAt eq datetimeoffset'\(cursor.updatedAt)' and id gt '\(cursor.id)')"
            query += "&$filter=" + filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }
        let reply = try await server.send(.get, "/tables/conv?" + query)
        let rows = try #require(reply.array, "\(reply.status) \(reply.text)")
        for row in rows {
            let id = try #require(row["id"] as? String)
            versions[id] = try #require(row["version"] as? String)
            cursor = (try #require(row["updatedAt"] as? String), id)
        }
        return rows.count == pageSize
    }
}
