import FaultProxy
import Foundation
import GRDB
import HTTPTypes
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// The real table service (TestSupport's ``TestService``, on a temporary SQLite file) with the
/// tables these tests sync, and a REST client that writes to it as another device would.
final class LiveService: Sendable {
    let service: TestService
    /// Plain protocol requests to the service, on a connection pool of this service's own.
    let rest: RESTClient

    init(
        folder: TemporaryFolder, tables: [String] = ["todoitem", "tag"], applicationKey: String? = nil,
        signIn: SignIn? = nil
    ) async throws {
        service = try await TestService.sqlite(in: folder, tables: tables) { configuration in
            configuration.applicationKey = applicationKey
            configuration.signIn = signIn
        }
        rest = RESTClient(base: service.url)
    }

    /// The same database served again (after ``stop()``) at the same address: the same service, so a
    /// store bound to it keeps its rows and queue.
    init(restarting previous: LiveService) async throws {
        service = try await previous.service.restarted()
        rest = RESTClient(base: service.url)
    }

    var url: URL { URL(string: service.url)! }
    var databasePath: String { service.sqlitePath ?? "" }

    /// A fault proxy in front of the service, passing everything until told otherwise.
    func proxy(plan: FaultPlan = .passThrough) async throws -> FaultProxy {
        try await service.proxy(plan: plan)
    }

    func stop() async { await service.stop() }
}

extension LiveService {
    /// Items `i0...` ("base i") pulled by `context`, then changed on the service ("server i") and
    /// in `context` ("client i"): under policy ask, its next push leaves operations 1...count in conflict.
    func changeOnBothSides(_ count: Int, pulledBy context: SyncContext) async throws {
        for index in 0..<count {
            try await rest.insert(["id": .string("i\(index)"), "text": .string("base \(index)"), "complete": false])
        }
        _ = try await context.table("todoitem").pull()
        for index in 0..<count {
            _ = try await rest.patch("i\(index)", ["text": .string("server \(index)")])
            try context.table("todoitem").update(["id": .string("i\(index)"), "text": .string("client \(index)")])
        }
    }
}

/// Plain protocol requests, as another device or a REST tool would send them.
struct RESTClient: Sendable {
    let base: String
    private let http = TestHTTPClient()

    struct Reply: Sendable {
        var status: Int
        var body: Data
        var item: Item? { (try? JSONDecoder().decode(JSONValue.self, from: body))?.objectValue }
        var items: [Item] {
            guard case .array(let rows)? = try? JSONDecoder().decode(JSONValue.self, from: body) else { return [] }
            return rows.compactMap(\.objectValue)
        }
    }

    func send(
        _ method: HTTPRequest.Method, _ path: String, body: Item? = nil, ifMatch: String? = nil
    ) async throws -> Reply {
        var headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
        if let ifMatch { headers[.ifMatch] = "\"\(ifMatch)\"" }
        if body != nil { headers[.contentType] = "application/json" }
        let answer = try await http.send(
            method, base + path, headers: headers, body: try body.map { try JSONEncoder().encode($0) })
        return Reply(status: answer.status, body: answer.body)
    }

    func get(_ table: String = "todoitem", _ id: String) async throws -> Item? {
        let reply = try await send(.get, "/tables/\(table)/\(id)")
        return reply.status == 200 ? reply.item : nil
    }

    /// Every row, deleted ones included.
    func all(_ table: String = "todoitem") async throws -> [Item] {
        var rows: [Item] = []
        while true {
            let page = try await send(
                .get, "/tables/\(table)?__includeDeleted=true&$orderby=id&$top=1000&$skip=\(rows.count)"
            ).items
            rows += page
            if page.count < 1000 { return rows }
        }
    }

    @discardableResult
    func insert(_ item: Item, table: String = "todoitem") async throws -> Item {
        let reply = try await send(.post, "/tables/\(table)", body: item)
        #expect(reply.status == 201)
        return reply.item ?? [:]
    }

    /// Changes an item as another device would (no If-Match).
    @discardableResult
    func patch(_ id: String, _ changes: Item, table: String = "todoitem") async throws -> Item {
        let reply = try await send(.patch, "/tables/\(table)/\(id)", body: changes)
        #expect(reply.status == 200)
        return reply.item ?? [:]
    }

    func delete(_ id: String, table: String = "todoitem") async throws {
        let reply = try await send(.delete, "/tables/\(table)/\(id)")
        #expect(reply.status == 200)
    }

    /// Inserts `count` rows, eight requests at a time.
    func seed(_ count: Int, prefix: String = "row", table: String = "todoitem") async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 8) {
                        let id = String(format: "\(prefix)-%06d", index)
                        _ = try await send(
                            .post, "/tables/\(table)",
                            body: [
                                "id": .string(id), "text": .string("text \(index)"), "complete": .bool(index % 3 == 0),
                            ])
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// A one-shot switch: `take()` is true once after `arm()` (or once from the start when `armed`).
final class Trigger: Sendable {
    private let state: Locked<Bool>
    init(armed: Bool = false) { state = Locked(armed) }
    func arm() { state.withLock { $0 = true } }
    func take() -> Bool {
        state.withLock { value in
            defer { value = false }
            return value
        }
    }
}

/// A value behind a lock, for test bookkeeping shared with server threads.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Every access goes through `lock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Test access to the service's SQLite file, for states the protocol cannot make (equal `updatedAt`).
func withServiceDatabase<T>(_ service: LiveService, _ body: (Database) throws -> T) throws -> T {
    let queue = try DatabaseQueue(path: service.databasePath)
    defer { try? queue.close() }
    return try queue.write(body)
}
