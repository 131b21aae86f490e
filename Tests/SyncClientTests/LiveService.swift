import Foundation
import GRDB
import HTTPServer
import HTTPTypes
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real table service on 127.0.0.1, an ephemeral port and a temporary SQLite file.
final class LiveService: Sendable {
    let databasePath: String
    let running: RunningTableService
    /// Plain protocol requests to the service, on a connection pool of this service's own.
    let rest: RESTClient

    init(
        folder: TemporaryFolder, tables: [String] = ["todoitem", "tag"], applicationKey: String? = nil,
        signIn: SignIn? = nil
    ) throws {
        databasePath = folder.file("service.sqlite")
        running = try TableService.start(
            TableService.Configuration(
                database: .sqlite(path: databasePath), applicationKey: applicationKey, tables: tables, signIn: signIn),
            port: 0, quiet: true)
        rest = RESTClient(base: running.url)
    }

    /// The same database served again (after ``stop()``) at the same address: the same service, so a
    /// store bound to it keeps its rows and queue. Retries for a moment while the port is released.
    init(restarting previous: LiveService, tables: [String] = ["todoitem", "tag"]) throws {
        databasePath = previous.databasePath
        running = try Self.start(databasePath, tables: tables, port: previous.running.port)
        rest = RESTClient(base: running.url)
    }

    private static func start(_ path: String, tables: [String], port: Int) throws -> RunningTableService {
        var attempt = 0
        while true {
            do {
                return try TableService.start(
                    TableService.Configuration(database: .sqlite(path: path), tables: tables), port: port, quiet: true)
            } catch {
                attempt += 1
                guard attempt < 50 else { throw error }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    var url: URL { URL(string: running.url)! }

    func stop() { running.stop() }

    deinit { running.stop() }
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

/// A test-only HTTP server that forwards to the real service and lets a test alter one exchange:
/// for faults the real service cannot produce (a lost answer, the official server's 409 echo).
///
/// Everything here is synchronous on the server's own threads (URLSession with a completion handler
/// and a semaphore): a handler that waited for Swift concurrency could deadlock with a test whose
/// task stops the server on one of the two cooperative threads.
final class FaultProxy: Sendable {
    typealias Forward = @Sendable () throws -> Response
    let server: HTTPServer
    private let log = Locked<[String]>([])

    /// `rule` gets each request and a way to forward it; it returns what the client receives.
    init(target: String, rule: @escaping @Sendable (Request, Forward) throws -> Response) throws {
        var router = Router()
        let log = self.log
        for method in [HTTPRequest.Method.get, .post, .patch, .delete] {
            router.on(
                method, "/tables/*",
                .sync { request in
                    log.withLock { $0.append("\(request.method.rawValue) \(request.path)") }
                    return try rule(request, { try FaultProxy.forward(request, to: target) })
                })
        }
        server = try HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, threadPoolSize: 4), responder: router.buildResponder())
    }

    var url: URL { URL(string: server.url)! }
    /// `METHOD /path` of every request received, in order.
    var requests: [String] { log.withLock { $0 } }

    deinit { server.stop() }

    static func forward(_ request: Request, to target: String) throws -> Response {
        let path = request.pathSegments.map { HTTPTransport.encode($0) }.joined(separator: "/")
        var text = target + "/" + path
        if !request.queryItems.isEmpty {
            text +=
                "?"
                + request.queryItems.map { HTTPTransport.encode($0.name) + "=" + HTTPTransport.encode($0.value) }
                .joined(separator: "&")
        }
        var outgoing = URLRequest(url: URL(string: text)!)
        outgoing.httpMethod = request.method.rawValue
        for field in request.headers
        where [ProtocolHeader.apiVersion, .ifMatch, .contentType, ProtocolHeader.applicationKey].contains(field.name) {
            outgoing.setValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        if !request.body.isEmpty { outgoing.httpBody = request.body }
        let (data, http) = try blockingSend(outgoing)
        var headers = HTTPFields()
        for (name, value) in http.allHeaderFields {
            guard let name = HTTPField.Name("\(name)"), [.eTag, .contentType, .link].contains(name) else { continue }
            headers.append(HTTPField(name: name, value: "\(value)"))
        }
        return Response(status: HTTPResponse.Status(code: http.statusCode), headers: headers, body: data)
    }
}

/// Sends a request and blocks the calling (non-cooperative) thread until the answer.
func blockingSend(_ request: URLRequest) throws -> (Data, HTTPURLResponse) {
    let outcome = Locked<Result<(Data, HTTPURLResponse), any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { data, response, error in
        if let data, let http = response as? HTTPURLResponse {
            outcome.withLock { $0 = .success((data, http)) }
        } else {
            outcome.withLock { $0 = .failure(error ?? URLError(.badServerResponse)) }
        }
        done.signal()
    }.resume()
    done.wait()
    return try outcome.withLock { $0! }.get()
}

extension RESTClient {
    /// A PATCH from a server thread (no Swift concurrency), for proxy rules.
    func blockingPatch(_ id: String, _ changes: Item, table: String = "todoitem") throws {
        var request = URLRequest(url: URL(string: base + "/tables/\(table)/\(id)")!)
        request.httpMethod = "PATCH"
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(changes)
        _ = try blockingSend(request)
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
