import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import Storage
import SyncClient
import SyncProtocol

/// The wide pull: ROWS rows of a table with 12 user columns (text, integer, real, boolean and date,
/// every column typed from its values by the client), into empty stores, against the same floors as
/// the todo pull (the same pages fetched with plain GETs, the same rows inserted with one prepared
/// statement per page), in rounds that alternate which goes first.
enum WidePull {
    /// The table and its user columns, with the SQLite type the floor gives each.
    static let table = "orders12"
    static let columns: [(name: String, type: String)] = [
        ("customer", "TEXT"), ("note", "TEXT"), ("city", "TEXT"), ("sku", "TEXT"), ("lines", "INTEGER"),
        ("quantity", "INTEGER"), ("total", "REAL"), ("weight", "REAL"), ("paid", "INTEGER"),
        ("shipped", "INTEGER"), ("due", "TEXT"), ("shippedAt", "TEXT"),
    ]
    static let systemColumns = ["id", "version", "createdAt", "updatedAt", "deleted"]

    /// What one run measured, in seconds over every round.
    struct Figures {
        var pull = 0.0
        var index = 0.0
        var fetch = 0.0
        var insert = 0.0
        var pages = 0
        var bytes = 0

        /// The benchmark's lines for these figures.
        func report(rows: Int, rounds: Int) -> [String] {
            func ratio(_ value: Double) -> String { String(format: "%.2f", value) }
            return [
                "pull  \(rows) rows of a 12-column table, \(rounds) times: \(ratio(pull)) s, "
                    + String(format: "%.0f rows/s", Double(rows * rounds) / pull),
                "  floor fetch  (same pages, plain GETs, \(bytes / 1_000_000) MB each time): \(ratio(fetch)) s;  "
                    + "floor insert (same rows, prepared statement): \(ratio(insert)) s",
                "  pull / (fetch + insert) = \(ratio(pull / (fetch + insert)))   [target ≤ 1.2];  "
                    + "then the search index: \(ratio(index)) s more",
            ]
        }
    }

    /// Row `index`'s body.
    static func body(_ index: Int) -> Data {
        let due = ProtocolDate.format(milliseconds: 1_790_000_000_000 + Int64(index) * 60_000)
        let id = "o-" + String(format: "%07d", index)
        let total = Double(index % 10_000) / 4 + 0.5
        let weight = Double(index % 300) / 8 + 0.25
        var members: [String] = []
        members.append(#""id":"\#(id)""#)
        members.append(#""customer":"customer \#(index % 997)""#)
        members.append(#""note":"order number \#(index) with some words""#)
        members.append(#""city":"city \#(index % 31)""#)
        members.append(#""sku":"SKU-\#(index % 5000)""#)
        members.append(#""lines":\#(index % 9 + 1)"#)
        members.append(#""quantity":\#(index % 40)"#)
        members.append(#""total":\#(total)"#)
        members.append(#""weight":\#(weight)"#)
        members.append(#""paid":\#(index % 2 == 0)"#)
        members.append(#""shipped":\#(index % 3 == 0)"#)
        members.append(#""due":"\#(due)""#)
        members.append(#""shippedAt":"\#(due)""#)
        return Data(("{" + members.joined(separator: ",") + "}").utf8)
    }

    static func request(_ base: String, _ method: String, _ path: String, body: Data? = nil) async throws -> ByteBuffer
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return try await response.body.collect(upTo: 64 << 20)
    }

    /// Seeds `rows` rows through the protocol, eight requests at a time (not measured).
    static func seed(_ base: String, rows: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: rows, by: 8) {
                        _ = try await request(base, "POST", "/tables/\(table)", body: body(index))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The pages a pull asked for (the same keyset filters) and the pulled rows as SQLite values.
    static func floorInputs(
        _ context: SyncContext, pageSize: Int
    ) throws -> (pagePaths: [String], rows: [[DatabaseValue]]) {
        let ordered = try context.table(table).query(TableQuery(orderBy: [.ascending("updatedAt"), .ascending("id")]))
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~$")
        var pagePaths: [String] = []
        var cursor: Item?
        for start in stride(from: 0, through: ordered.count, by: pageSize) {
            var query = "$orderby=updatedAt%2Cid&$top=\(pageSize)&__includeDeleted=true"
            if let cursor, let time = cursor["updatedAt"]?.stringValue, let id = cursor["id"]?.stringValue {
                let filter =
                    "((updatedAt gt datetimeoffset'\(time)') or (updatedAt eq datetimeoffset'\(time)' and id gt '\(id)'))"
                query =
                    "$filter=" + (filter.addingPercentEncoding(withAllowedCharacters: allowed) ?? filter) + "&" + query
            }
            pagePaths.append("/tables/\(table)?" + query)
            if start + pageSize - 1 < ordered.count { cursor = ordered[start + pageSize - 1] }
        }
        let names = systemColumns + columns.map(\.name)
        let rows: [[DatabaseValue]] = ordered.map { item in
            names.map { name in
                switch item[name] {
                case .string(let text)?: text.databaseValue
                case .bool(let flag)?: (flag ? 1 : 0).databaseValue
                case .number(let number)?: number.databaseValue
                default: .null
                }
            }
        }
        return (pagePaths, rows)
    }

    /// The floor's write of one page: one transaction, one prepared statement (synchronous, like the
    /// todo pull's floor).
    static func insertPage(_ rows: ArraySlice<[DatabaseValue]>, into floor: DatabasePool, _ names: [String]) throws {
        try floor.write { db in
            let insert = try BulkInserter(db, table: table, columns: names, onConflict: .replace)
            for row in rows { try insert.insert(row) }
        }
    }

    /// Seeds the service with `rows` rows of the wide table, then measures their pull.
    static func run(base: String, rows: Int, pageSize: Int, rounds: Int, work: String) async throws -> Figures {
        try await seed(base, rows: rows)
        return try await measure(base: base, rows: rows, pageSize: pageSize, rounds: rounds, work: work)
    }

    /// Pulls `rows` rows of the wide table into empty stores in `rounds` rounds, each beside its floors.
    static func measure(base: String, rows: Int, pageSize: Int, rounds: Int, work: String) async throws -> Figures {
        var figures = Figures()
        var pagePaths: [String] = []
        var floorRows: [[DatabaseValue]] = []
        let names = systemColumns + columns.map(\.name)
        let create =
            "CREATE TABLE \(table) (id TEXT PRIMARY KEY NOT NULL, version TEXT, createdAt TEXT, updatedAt TEXT, "
            + "deleted INTEGER, " + columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ") + "); "
            + "CREATE INDEX \(table)_updatedAt ON \(table) (updatedAt, id);"
        for round in 0..<rounds {
            for pulling in round % 2 == 0 ? [true, false] : [false, true] {
                if pulling {
                    let context = try SyncContext(
                        path: work + "/wide-pull-\(round).sqlite", configuration: .init(remoteURL: URL(string: base)!))
                    var start = ContinuousClock.now
                    let pulled = try await context.pull(
                        table, queryId: "bench", settings: PullSettings(pageSize: pageSize))
                    figures.pull += seconds(since: start)
                    precondition(pulled.received == rows, "pulled \(pulled.received) of \(rows)")
                    let described = try context.description(of: table)
                    precondition(described.columns.count == columns.count, "\(described.columns.count) columns")
                    start = .now
                    await context.listIndexesCaughtUp()
                    figures.index += seconds(since: start)
                    if pagePaths.isEmpty { (pagePaths, floorRows) = try floorInputs(context, pageSize: pageSize) }
                    try await context.close()
                } else {
                    var start = ContinuousClock.now
                    figures.bytes = 0
                    for path in pagePaths { figures.bytes += try await request(base, "GET", path).readableBytes }
                    figures.fetch += seconds(since: start)
                    let floor = try StoreDatabase.open(
                        at: work + "/wide-floor-\(round).sqlite",
                        migrations: [StoreMigration("table") { db in try db.execute(sql: create) }],
                        durability: .everyCommit)
                    start = .now
                    for first in stride(from: 0, to: floorRows.count, by: pageSize) {
                        try insertPage(floorRows[first..<min(first + pageSize, floorRows.count)], into: floor, names)
                    }
                    figures.insert += seconds(since: start)
                }
            }
        }
        figures.pages = pagePaths.count
        return figures
    }
}
