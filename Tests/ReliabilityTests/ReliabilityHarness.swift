import FaultProxy
import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TableService
import TestSupport
import Testing

/// A table service on a temporary SQLite file, a fault proxy in front of it, and helpers to read
/// the service's rows directly (never through the proxy).
final class ReliabilityHarness: Stoppable {
    let folder: TemporaryFolder
    let service: TestService
    let proxy: FaultProxy
    let http = TestHTTPClient()

    init(plan: FaultPlan = .passThrough) async throws {
        folder = try TemporaryFolder()
        service = try await TestService.sqlite(in: folder)
        proxy = try await service.proxy(plan: plan)
    }

    /// A sync context on a new store in the folder, talking to the service through the proxy. No
    /// fault of the proxy stalls a request, so the deadline is long: on a loaded machine a short one
    /// would end healthy requests too.
    /// `retries`: how many times a request whose connection dropped is sent again in the same sync
    /// (0: the sync stops at the first dropped connection, as after its last retry on a bad link).
    func client(
        _ name: String = "client", direct: Bool = false, timeout: TimeInterval = 60, retries: Int = 4
    ) throws -> SyncContext {
        try SyncContext(
            path: folder.file("\(name).sqlite"),
            configuration: SyncConfiguration(
                remoteURL: URL(string: direct ? service.url : proxy.url)!, requestTimeout: timeout,
                connectionRetry: ConnectionRetry(retries: retries)))
    }

    /// Every row of `todoitem` on the service, soft-deleted ones included, by id.
    func serviceRows() async throws -> [String: Item] {
        var rows: [String: Item] = [:]
        var skip = 0
        while true {
            let reply = try await get(
                "/tables/todoitem?__includeDeleted=true&$orderby=id&$top=1000&$skip=\(skip)")
            #expect(reply.status == 200)
            let page = try JSONDecoder().decode([Item].self, from: reply.body)
            for row in page {
                let id = try #require(row["id"]?.stringValue)
                #expect(rows[id] == nil, "the service holds two rows with id \(id)")
                rows[id] = row
            }
            if page.count < 1000 { return rows }
            skip += page.count
        }
    }

    /// A GET straight to the service (or another base address).
    func get(_ target: String, base: String? = nil) async throws -> (status: Int, body: Data) {
        try await send(.get, target, base: base)
    }

    func send(
        _ method: HTTPRequest.Method, _ target: String, body: Data? = nil, headers: HTTPFields = [:],
        base: String? = nil
    ) async throws -> (status: Int, body: Data) {
        // `Accept` as every protocol client sends it.
        var fields: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0", .accept: "application/json"]
        if body != nil, headers[.contentType] == nil { fields[.contentType] = "application/json" }
        fields.append(contentsOf: headers)
        // The client's default deadline: a safety net, never what a test waits for.
        let answer = try await http.send(method, (base ?? service.url) + target, headers: fields, body: body)
        return (answer.status, answer.body)
    }

    /// A request without a body written byte for byte on a socket of its own, to the service.
    func sendRaw(_ method: HTTPRequest.Method, _ target: String) async throws -> (status: Int, body: Data) {
        let answer = try await RawHTTP.send(
            port: service.port,
            "\(method.rawValue) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        )
        let status = answer.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = answer.range(of: "\r\n\r\n").map { answer[$0.upperBound...] } ?? ""
        return (status, Data(body.utf8))
    }

    /// Stops the proxy and the service, then deletes the folder.
    func stop() async {
        await proxy.stop()
        await service.stop()
        folder.remove()
    }
}

/// Starts a ``ReliabilityHarness`` whose proxy applies `plan`, runs `body` with it, then stops it
/// and deletes its folder, waiting until that is done, also when `body` throws (see TestSupport's
/// `withStopping`).
func withReliabilityHarness(
    plan: FaultPlan = .passThrough, _ body: (ReliabilityHarness) async throws -> Void
) async throws {
    try await withStopping(ReliabilityHarness(plan: plan), body)
}

/// Whether two values mean the same (`complete` is a JSON bool on the wire and may be 0/1 locally).
func sameValue(_ left: JSONValue?, _ right: JSONValue?) -> Bool {
    let left = left ?? .null
    let right = right ?? .null
    if left == right { return true }
    switch (left, right) {
    case (.bool(let flag), .number(let number)), (.number(let number), .bool(let flag)): return (number != 0) == flag
    default: return false
    }
}

/// Checks that every local row equals the service's row (user fields and system columns), that
/// the service has no live row the client lacks, and that the queue is empty.
func expectConverged(
    _ context: SyncContext, _ harness: ReliabilityHarness, sourceLocation: SourceLocation = #_sourceLocation
)
    async throws
{
    let operations = try context.operations.all()
    #expect(
        operations.isEmpty, "queue not empty: \(operations.map { "\($0.kind) \($0.itemId) \($0.state)" })",
        sourceLocation: sourceLocation)
    let server = try await harness.serviceRows()
    let local = try context.table("todoitem").query()
    var seen = Set<String>()
    for row in local {
        let id = row["id"]?.stringValue ?? "?"
        seen.insert(id)
        guard let remote = server[id] else {
            Issue.record("local row \(id) is not on the service", sourceLocation: sourceLocation)
            continue
        }
        #expect(
            remote["deleted"]?.boolValue != true, "local row \(id) is deleted on the service",
            sourceLocation: sourceLocation)
        for key in ["text", "complete", "version", "createdAt", "updatedAt"] where !sameValue(row[key], remote[key]) {
            Issue.record(
                "row \(id): local \(key) \(row[key] ?? .null) ≠ service \(remote[key] ?? .null)",
                sourceLocation: sourceLocation)
        }
    }
    for (id, row) in server where row["deleted"]?.boolValue != true && !seen.contains(id) {
        Issue.record("service row \(id) is missing locally", sourceLocation: sourceLocation)
    }
}
