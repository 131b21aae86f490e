import Foundation
import HTTPTypes
import SyncProtocol

/// Plain table-protocol requests, as another device or a REST tool would send them: for tests to
/// read and write a service's rows without going through the client under test.
public struct TableClient: Sendable {
    /// The service's address, such as `http://127.0.0.1:8090`.
    public let base: String
    private let http: TestHTTPClient

    /// - Parameter caFile: CAs trusted besides the system's, for a service speaking HTTPS.
    public init(base: String, caFile: String? = nil) {
        self.base = base
        http = TestHTTPClient(caFile: caFile)
    }

    /// An answer: its status and body, and the body read as one item or a page of items.
    public struct Reply: Sendable {
        public var status: Int
        public var body: Data
        public var item: Item? { (try? JSONDecoder().decode(JSONValue.self, from: body))?.objectValue }
        public var items: [Item] {
            guard case .array(let rows)? = try? JSONDecoder().decode(JSONValue.self, from: body) else { return [] }
            return rows.compactMap(\.objectValue)
        }
    }

    /// Sends `body` as JSON to `base + path`, with `If-Match` when given.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, body: Item? = nil, ifMatch: String? = nil
    ) async throws -> Reply {
        var headers: HTTPFields = [ProtocolHeader.apiVersion: "2.0.0"]
        if let ifMatch { headers[.ifMatch] = "\"\(ifMatch)\"" }
        if body != nil { headers[.contentType] = "application/json" }
        let answer = try await http.send(
            method, base + path, headers: headers, body: try body.map { try JSONEncoder().encode($0) })
        return Reply(status: answer.status, body: answer.body)
    }

    /// The item `id` of `table`; nil when the service answers anything but 200.
    public func get(_ table: String = "todoitem", _ id: String) async throws -> Item? {
        let reply = try await send(.get, "/tables/\(table)/\(id)")
        return reply.status == 200 ? reply.item : nil
    }

    /// Every row, deleted ones included.
    public func all(_ table: String = "todoitem") async throws -> [Item] {
        var rows: [Item] = []
        while true {
            let page = try await send(
                .get, "/tables/\(table)?__includeDeleted=true&$orderby=id&$top=1000&$skip=\(rows.count)"
            ).items
            rows += page
            if page.count < 1000 { return rows }
        }
    }

    /// Inserts `item` (the service must answer 201) and returns the stored item.
    @discardableResult
    public func insert(_ item: Item, table: String = "todoitem") async throws -> Item {
        let reply = try await send(.post, "/tables/\(table)", body: item)
        try reply.expect(201)
        return reply.item ?? [:]
    }

    /// Changes an item as another device would (no If-Match); the service must answer 200.
    @discardableResult
    public func patch(_ id: String, _ changes: Item, table: String = "todoitem") async throws -> Item {
        let reply = try await send(.patch, "/tables/\(table)/\(id)", body: changes)
        try reply.expect(200)
        return reply.item ?? [:]
    }

    /// Deletes an item; the service must answer 200.
    public func delete(_ id: String, table: String = "todoitem") async throws {
        let reply = try await send(.delete, "/tables/\(table)/\(id)")
        try reply.expect(200)
    }

    /// Inserts `count` rows (`prefix-000000`...), eight requests at a time.
    public func seed(_ count: Int, prefix: String = "row", table: String = "todoitem") async throws {
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

extension TableClient.Reply {
    /// Throws ``UnexpectedStatus`` unless the status is `status`.
    func expect(_ status: Int) throws(UnexpectedStatus) {
        guard self.status == status else {
            throw UnexpectedStatus(expected: status, received: self.status, body: String(decoding: body, as: UTF8.self))
        }
    }
}

/// A service answered a request of ``TableClient`` with another status than the one it must.
public struct UnexpectedStatus: Error, CustomStringConvertible {
    public let expected: Int
    public let received: Int
    public let body: String

    public var description: String { "expected \(expected), the service answered \(received): \(body)" }
}
