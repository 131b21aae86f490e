import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol

/// The one item API, for every table (`todoitem` included): `GET /api/data` (the tables with their
/// counts), `/api/data/{table}` (GET a page of rows, POST a new row) and `/api/data/{table}/{id}`
/// (GET, PATCH, DELETE), from the same typed values and checks as the pages. Writes carry the
/// `X-CSRF-Token` header; a value that does not fit its column is refused (422) naming the column.
struct DataAPIController: Sendable {
    let environment: DashboardEnvironment

    /// `GET /api/data/{table}`: the table's columns and one page of rows, newest first.
    struct RowsAnswer: Encodable {
        struct Column: Encodable {
            var name: String
            var type: String
        }

        var table: String
        var columns: [Column]
        var items: [Item]
        /// The columns of each row (by id) whose value is of another type than the column's.
        var mismatched: [String: [String]]
        /// The sync state of each row (by id) with a queued change, as the list's badge says it
        /// ("pending insert", "conflict"...); the others are in sync.
        var syncStates: [String: String]
        var total: Int?
        var older: Int64?
        var newer: Int64?
    }

    /// Adds its routes to the dashboard's `/api` group (their patterns under it).
    func addRoutes(to api: inout Router) {
        api.get("/data") { _ in
            JSONAnswer.response(["tables": try DataController(environment: environment).tableLines()])
        }
        api.get("/data/:table") { request in try rows(request) }
        api.post("/data/:table") { request async throws in try await add(request) }
        api.get("/data/:table/:id") { request in JSONAnswer.response(try row(request).item) }
        api.patch("/data/:table/:id") { request async throws in try await update(request) }
        api.delete("/data/:table/:id") { request async throws in try await delete(request) }
    }

    private var pages: DataController { DataController(environment: environment) }

    private func table(_ request: Request) throws(HTTPError) -> TableDescription {
        try pages.table(.plain(request.parameters["table"] ?? ""))
    }

    private func rows(_ request: Request) throws -> Response {
        let table = try table(request)
        let query = try DataListQuery(request, table: table, preset: .plain(table.name))
        let context = environment.context
        let page = try storeCall { () throws(SyncError) in try context.listPage(table.name, query.request) }
        var mismatched: [String: [String]] = [:]
        for item in page.items {
            let columns = table.mismatchedColumns(of: item)
            if !columns.isEmpty, let id = item[SystemColumn.id]?.stringValue { mismatched[id] = columns }
        }
        return JSONAnswer.response(
            RowsAnswer(
                table: table.name, columns: table.columns.map { .init(name: $0.name, type: $0.type.rawValue) },
                items: page.items, mismatched: mismatched,
                syncStates: page.operations.mapValues { Display.badge($0).label }, total: page.total,
                older: page.hasOlder ? page.keys.last : nil, newer: page.hasNewer ? page.keys.first : nil))
    }

    private func row(_ request: Request) throws(HTTPError) -> (table: TableDescription, item: Item) {
        let (table, item, _) = try pages.row(request, .plain(request.parameters["table"] ?? ""))
        return (table, item)
    }

    /// The body's members, each fitting its column's type (a new column takes any value), checked as
    /// the pages check them (``TablePreset/check(_:table:inserting:)``).
    private func values(_ request: Request, for table: TableDescription, inserting: Bool) throws(HTTPError) -> Item {
        guard case .object(var members) = try request.decodeJSON(JSONValue.self) else {
            throw HTTPError(.badRequest, "Send the row as a JSON object of column names and values.")
        }
        if inserting, let id = members[SystemColumn.id] {
            guard case .string(let text) = id, (1...255).contains(text.count) else {
                throw HTTPError(.unprocessableContent, "An id must have 1 to 255 characters.")
            }
        }
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            if SystemColumn.serverOwned.contains(name) || name == SystemColumn.version {
                throw HTTPError(.unprocessableContent, "'\(name)' is set by the service, not by you.")
            }
            if let type = table.columnType(name), !type.fits(value) {
                throw HTTPError(
                    .unprocessableContent,
                    "The value of '\(name)' is not a \(type.rawValue) value (\(value.jsonText)); nothing was saved.")
            }
        }
        let refused = TablePreset.check(&members, table: table.name, inserting: inserting)
        if let first = refused.min(by: { $0.key < $1.key }) {
            throw HTTPError(.unprocessableContent, "'\(first.key)': \(first.value) Nothing was saved.")
        }
        return members
    }

    private func add(_ request: Request) async throws -> Response {
        let table = try table(request)
        let item = try values(request, for: table, inserting: true)
        let context = environment.context
        return JSONAnswer.response(
            try await storeCall { () async throws(SyncError) in try await context.table(table.name).insert(item) },
            status: .created)
    }

    private func update(_ request: Request) async throws -> Response {
        let (table, item) = try row(request)
        var changes = try values(request, for: table, inserting: false)
        changes[SystemColumn.id] = item[SystemColumn.id]
        let context = environment.context
        return JSONAnswer.response(
            try await storeCall { () async throws(SyncError) in try await context.table(table.name).update(changes) })
    }

    private func delete(_ request: Request) async throws -> Response {
        let (table, item) = try row(request)
        let id = item[SystemColumn.id]?.stringValue ?? ""
        let context = environment.context
        try await storeCall { () async throws(SyncError) in try await context.table(table.name).delete(id: id) }
        return JSONAnswer.response(["deleted": id])
    }
}
