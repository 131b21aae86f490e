import HTTPServer
import SyncClient

/// The query string of `/data/{table}`, read and checked: `q` (search of the text columns),
/// `flag=COLUMN&is=true|false` (a boolean column's filter), and the page (`older`, `newer`, `at=last`).
struct DataListQuery {
    let table: String
    var search = ""
    var flag: ListRequest.Flag?
    var position = ListPosition.first

    init(_ request: Request, table: TableDescription) throws(HTTPError) {
        self.table = table.name
        search = String((request.query("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(200))
        if let column = request.query("flag"), !column.isEmpty {
            guard table.columnType(column) == .boolean else {
                throw HTTPError(.badRequest, "“\(column)” is not a true/false column of \(table.name).")
            }
            guard let value = ["true": true, "false": false][request.query("is") ?? ""] else {
                throw HTTPError(.badRequest, "Filter with is=true or is=false.")
            }
            flag = ListRequest.Flag(column, value)
        }
        if let value = request.query("older"), !value.isEmpty {
            position = .olderThan(try Self.key(value))
        } else if let value = request.query("newer"), !value.isEmpty {
            position = .newerThan(try Self.key(value))
        } else if let value = request.query("at"), !value.isEmpty {
            guard value == "last" else { throw HTTPError(.badRequest, "Use at=last for the last page.") }
            position = .last
        }
    }

    private static func key(_ value: String) throws(HTTPError) -> Int64 {
        guard let key = Int64(value), key >= 0 else {
            throw HTTPError(.badRequest, "A page position is a whole number, as in the Next and Previous links.")
        }
        return key
    }

    var request: ListRequest {
        ListRequest(flag: flag, search: search, position: position, limit: DataController.pageSize)
    }

    /// The list's address with this query, another flag filter (`.some(nil)`: none) or another page.
    func href(_ position: ListPosition = .first, flag: ListRequest.Flag?? = nil) -> String {
        var items: [String] = []
        if !search.isEmpty { items.append("q=\(PercentDecoding.encode(search))") }
        if let flag = flag ?? self.flag {
            items.append("flag=\(PercentDecoding.encode(flag.column))&is=\(flag.value)")
        }
        switch position {
        case .first: break
        case .olderThan(let key): items.append("older=\(key)")
        case .newerThan(let key): items.append("newer=\(key)")
        case .last: items.append("at=last")
        }
        return DataController.href(table) + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    }
}
